// An attachment delete cut short (a 5xx, a crash) leaves the row's tombstone (services/attachments/
// delete.ts): a repeated DELETE completes it, and so does the cron trigger when nobody repeats it.
// An upload deleted mid-body was otherwise left for good: its tombstone's status is no longer
// `uploading`, which the abandoned-upload sweep looks for.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { attachmentPrefix } from "../../r2-layout";
import { CUT_SHORT_DELETE_MS, finishCutShortDeletes, purgeAttachment } from "../../services/attachments/delete";
import { getAttachmentRow, insertAttachment } from "../../services/attachments/store";
import { newRow } from "../../workers/chat/routes/attachments";
import { flakyBucket } from "./delete-faults";
import { createConversation, newTenantWithId } from "./helpers";

const tombstoneOf = (id: string) =>
  env.DB.prepare("SELECT id, status, updated_at AS updatedAt FROM attachments WHERE id LIKE ?")
    .bind(`${id}%`)
    .first<{ id: string; status: string; updatedAt: string }>();

describe("an attachment delete cut short that nobody repeats", () => {
  it("is completed by the cron sweep once its tombstone is an hour old, bytes and row, and not before", async () => {
    const { tenantId, key } = await newTenantWithId();
    const conversationId = await createConversation(undefined, key);
    const row = newRow({ tenantId, conversationId, name: "half.txt", type: "text/plain", status: "uploading" });
    await insertAttachment(env.DB, row);
    await env.BUCKET.put(row.r2Key, "bytes of an upload cut off");
    // The delete turns the row into its tombstone, then R2 fails: cut short.
    const bucket = flakyBucket({ on: true });
    await expect(purgeAttachment(Object.create(env, { BUCKET: { value: bucket } }), row)).rejects.toThrow(/injected/);
    const tombstone = (await tombstoneOf(row.id))!;
    expect(tombstone).toMatchObject({ status: "deleting" });
    expect(await getAttachmentRow(env.DB, tenantId, row.id)).toBeNull();

    // Not yet: a delete may still be running (the sweep runs at the real clock, so other files'
    // deletes in flight, seconds old, are never taken).
    await finishCutShortDeletes(env, { now: Date.now(), limit: 200 });
    expect(await tombstoneOf(row.id)).not.toBeNull();
    // An hour on (its stamp moved back), the sweep completes it.
    const old = new Date(Date.parse(tombstone.updatedAt) - CUT_SHORT_DELETE_MS - 1_000).toISOString();
    await env.DB.prepare("UPDATE attachments SET updated_at = ? WHERE id = ?").bind(old, tombstone.id).run();
    expect(await finishCutShortDeletes(env, { now: Date.now(), limit: 200 })).toBeGreaterThan(0);
    expect(await tombstoneOf(row.id)).toBeNull();
    expect((await env.BUCKET.list({ prefix: attachmentPrefix(tenantId, row.id) })).objects).toEqual([]);
  });
});
