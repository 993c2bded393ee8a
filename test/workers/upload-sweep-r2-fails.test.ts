// The abandoned-upload sweep when R2 fails: the row stays (claimed, so no finish can make it ready)
// and names the bytes until they are gone, so the next tick removes them; one upload's failure
// does not stop the sweep of the others.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sweepAbandonedUploads } from "../../workers/chat/scheduled";
import { finishAttachment, getAttachmentRow, insertAttachment } from "../../services/attachments/store";
import { newRow } from "../../workers/chat/routes/attachments";
import { createConversation, newTenantWithId } from "./helpers";

const DAY = 24 * 60 * 60_000;

/** An upload left open for a day, its bytes in R2. */
async function staleUpload(tenantId: string, conversationId: string, name: string) {
  const old = new Date(Date.now() - DAY).toISOString();
  const row = newRow({ tenantId, conversationId, name, type: "text/plain", status: "uploading" });
  await insertAttachment(env.DB, { ...row, createdAt: old, updatedAt: old });
  await env.BUCKET.put(row.r2Key, "hello bytes");
  return row;
}

/** The bucket, but its deletes of `failsFor` (or of any key when none is given) throw. */
function failingDeletes(failsFor?: string): R2Bucket {
  return new Proxy(env.BUCKET, {
    get(target, prop) {
      if (prop === "delete")
        return async (keys: string | string[]) => {
          const named = Array.isArray(keys) ? keys : [keys];
          if (!failsFor || named.includes(failsFor)) throw new Error("injected: R2 delete failed");
          return target.delete(keys);
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const withBucket = (bucket: R2Bucket): Env => Object.create(env, { BUCKET: { value: bucket } });

const finishOf = (row: { tenantId: string; id: string }) =>
  finishAttachment(env.DB, {
    tenantId: row.tenantId,
    id: row.id,
    change: { status: "ready", size: 11, facts: JSON.stringify({ kind: "text", lines: 1 }) },
  });

describe("the abandoned-upload sweep when R2 fails", () => {
  it("keeps the row, claimed, after a failed tick and removes bytes and row on the next", async () => {
    const { tenantId, key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    const row = await staleUpload(tenantId, conv, "left.txt");
    await sweepAbandonedUploads(withBucket(failingDeletes()), Date.now()).catch(() => null);
    // The row still names the bytes, and no finish can make it ready any more.
    const kept = await getAttachmentRow(env.DB, tenantId, row.id);
    expect(kept).not.toBeNull();
    expect(kept?.status).not.toBe("ready");
    expect(await env.BUCKET.head(row.r2Key)).not.toBeNull();
    expect(await finishOf(row)).toBe("missing");
    expect((await getAttachmentRow(env.DB, tenantId, row.id))?.status).not.toBe("ready");
    // The next tick takes it again: bytes, then row.
    await sweepAbandonedUploads(env, Date.now());
    expect(await env.BUCKET.head(row.r2Key)).toBeNull();
    expect(await getAttachmentRow(env.DB, tenantId, row.id)).toBeNull();
  });

  it("sweeps the other uploads when one upload's bytes cannot be removed", async () => {
    const { tenantId, key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    const stuck = await staleUpload(tenantId, conv, "stuck.txt");
    const other = await staleUpload(tenantId, conv, "other.txt");
    await expect(sweepAbandonedUploads(withBucket(failingDeletes(stuck.r2Key)), Date.now())).resolves.toBeTypeOf(
      "number",
    );
    expect(await getAttachmentRow(env.DB, tenantId, other.id)).toBeNull();
    expect(await env.BUCKET.head(other.r2Key)).toBeNull();
    // The one that failed stays for the next tick, which removes it.
    expect(await getAttachmentRow(env.DB, tenantId, stuck.id)).not.toBeNull();
    expect(await env.BUCKET.head(stuck.r2Key)).not.toBeNull();
    await sweepAbandonedUploads(env, Date.now());
    expect(await getAttachmentRow(env.DB, tenantId, stuck.id)).toBeNull();
    expect(await env.BUCKET.head(stuck.r2Key)).toBeNull();
  });
});
