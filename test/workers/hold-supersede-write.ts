// A regenerate appends the prompt's copy (R2, then the index) and only then writes the head that
// marks the replaced exchange superseded. Tests of what readers see in between hold that write.
import { eventually, inConversation } from "./helpers";

/** Holds the live object's head write that carries a `superseded` mark until `release`. */
export async function holdSupersedeHeadWrite(conversationId: string) {
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
          if (typeof body === "string" && key.endsWith("head.json") && body.includes('"superseded"')) {
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
