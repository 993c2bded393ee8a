// Faults put inside a live conversation object, for tests: one of its bindings swapped for a
// wrapper (a D1 that fails or waits, an R2 whose write is held), as the object reads `this.env`
// at each use.
import { inConversation } from "./helpers";

/** Swaps one of the live object's bindings. */
export function swapBinding(id: string, name: "BUCKET", wrap: (binding: R2Bucket) => unknown): Promise<void>;
export function swapBinding(id: string, name: "DB", wrap: (binding: D1Database) => unknown): Promise<void>;
export function swapBinding(id: string, name: "BUCKET" | "DB", wrap: (binding: never) => unknown): Promise<void> {
  return inConversation(id, (instance) => {
    Object.defineProperty(instance, "env", {
      value: Object.create(instance.env, { [name]: { value: wrap(instance.env[name] as never) } }),
      configurable: true,
      writable: true,
    });
  });
}

/**
 * Holds the object's first message-batch write (R2 put under messages/) whose body `matches`
 * until `release`; `atPut` resolves when it is held.
 */
export async function holdMessageWrite(id: string, matches: (body: unknown) => boolean) {
  let reached!: () => void;
  const atPut = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  await swapBinding(id, "BUCKET", (bucket: R2Bucket) => {
    let held = false;
    return new Proxy(bucket, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop !== "put") return typeof value === "function" ? value.bind(target) : value;
        return async (key: string, body: unknown, ...rest: unknown[]) => {
          if (!held && key.includes("/messages/") && matches(body)) {
            held = true;
            reached();
            await gate;
          }
          return (target.put as (...args: unknown[]) => Promise<R2Object | null>)(key, body, ...rest);
        };
      },
    });
  });
  return { atPut, release };
}
