// A turn that stops after its turn_start with nothing saved and nothing spent: its conversation's
// head writes fail (past their retries), and the turn names a file of another conversation, whose
// activation is a head write before the model loop (rate-limit-storage-refund, rate-limit-sse-refund,
// socket-send-storage-refund).
import { expect } from "vitest";
import { api, createConversation } from "./helpers";
import { swapBinding } from "./object-bindings";

/** The object of conversation `id` fails every write of its head.json from now on. */
export const breakHeadWrites = (id: string) =>
  swapBinding(
    id,
    "BUCKET",
    (bucket: R2Bucket) =>
      new Proxy(bucket, {
        get(target, prop) {
          if (prop === "put")
            return async (objectKey: string, ...rest: unknown[]) => {
              if (objectKey.endsWith("head.json")) throw new Error("injected: R2 down");
              return (target.put as (...args: unknown[]) => Promise<R2Object | null>)(objectKey, ...rest);
            };
          const value = Reflect.get(target, prop);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
  );

/** A file of a new conversation of the key's, to name in a turn elsewhere: its attachment id. */
export async function fileElsewhere(key: string): Promise<string> {
  const source = await createConversation(undefined, key);
  const up = await api("POST", `/v1/conversations/${source}/attachments?name=notes.txt`, "line one\nline two\n", {
    key,
    raw: true,
    headers: { "content-type": "text/plain" },
  });
  expect(up.status).toBe(201);
  return up.json.id as string;
}
