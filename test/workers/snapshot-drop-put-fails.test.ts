// A conversation keeps its newest 50 prompt snapshots and deletes the older ones' bodies from R2,
// even when the put of the snapshot that pushed one out fails: the row is already gone from the
// object's SQLite, so a body left behind would never be listed, nor deleted, again.
import { describe, expect, it } from "vitest";
import { promptSnapshotKey, promptSnapshotPrefix } from "../../r2-layout";
import { api, createConversation, eventually, r2KeysUnder, send } from "./helpers";
import { swapBinding } from "./object-bindings";

describe("a dropped prompt snapshot", () => {
  it("has its R2 body deleted even when the new snapshot's put fails", { timeout: 180_000 }, async () => {
    const id = await createConversation();
    const prefix = promptSnapshotPrefix("dev", id);
    for (let i = 0; i < 50; i++) expect((await send(id, `turn ${i}`)).status).toBe(200);
    await eventually(async () => (await r2KeysUnder(prefix)).length === 50);
    let failed = false;
    await swapBinding(
      id,
      "BUCKET",
      (bucket: R2Bucket) =>
        new Proxy(bucket, {
          get(target, prop) {
            const value = Reflect.get(target, prop);
            if (prop !== "put") return typeof value === "function" ? value.bind(target) : value;
            return async (key: string, ...rest: unknown[]) => {
              if (!failed && key.startsWith(prefix)) {
                failed = true;
                throw new Error("R2: 503");
              }
              return (target.put as (...args: unknown[]) => Promise<R2Object | null>)(key, ...rest);
            };
          },
        }),
    );
    for (let i = 50; i < 55; i++) expect((await send(id, `turn ${i}`)).status).toBe(200);
    expect(failed).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    const listed = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data.map((s) => s.id);
    expect(listed).toHaveLength(50);
    const kept = new Set(listed.map((s) => promptSnapshotKey("dev", id, s)));
    const keys = await r2KeysUnder(prefix);
    expect(keys.filter((k) => !kept.has(k))).toEqual([]);
  });
});
