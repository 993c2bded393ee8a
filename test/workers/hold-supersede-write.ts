// Holding one R2 write of a live conversation object until the test lets it go, to see what readers
// see meanwhile. A regenerate appends the prompt's copy (R2, then the index) and only then writes
// the head that marks the replaced exchange superseded (holdSupersedeHeadWrite); a turn's reply is
// written to R2 before the object's activity is touched.
import { eventually, inConversation } from "./helpers";

/** Holds the live object's R2 puts that `matches` until `release`; `reached` once the first is held. */
export async function holdObjectPut(conversationId: string, matches: (key: string, body: string) => boolean) {
  let held = false;
  const reached = eventually(async () => held || null);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  await inConversation(conversationId, (instance) => {
    const bucket = new Proxy(instance.env.BUCKET, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop !== "put") return typeof value === "function" ? value.bind(target) : value;
        return async (key: string, body: string, options?: R2PutOptions) => {
          if (typeof body === "string" && matches(key, body)) {
            held = true;
            await gate;
          }
          return target.put(key, body, options);
        };
      },
    });
    Object.defineProperty(instance, "env", {
      value: Object.create(instance.env, { BUCKET: { value: bucket } }),
      configurable: true,
      writable: true,
    });
  });
  return { reached, release };
}

/** Holds the live object's head write that carries a `superseded` mark until `release`. */
export const holdSupersedeHeadWrite = (conversationId: string) =>
  holdObjectPut(conversationId, (key, body) => key.endsWith("head.json") && body.includes('"superseded"'));
