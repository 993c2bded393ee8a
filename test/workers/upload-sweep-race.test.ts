// The abandoned-upload sweep never takes the bytes of an upload that finished while it ran: a row
// made ready between the sweep's listing and its delete keeps its bytes; a stale row still open is
// removed with its bytes. While the sweep removes an upload's bytes its row still names them (so
// a failed removal is retried) and a finish landing then is refused.
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

describe("the abandoned-upload sweep", () => {
  it("leaves an upload that a finish made ready while it ran with its bytes", async () => {
    const { tenantId, key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    const racing = await staleUpload(tenantId, conv, "racing.txt");
    const abandoned = await staleUpload(tenantId, conv, "abandoned.txt");
    // The finish lands once the sweep has listed the stale rows, before it deletes anything.
    let finished = false;
    const finishFirst = async () => {
      if (finished) return;
      finished = true;
      const kept = await finishAttachment(env.DB, {
        tenantId,
        id: racing.id,
        change: { status: "ready", size: 11, facts: JSON.stringify({ kind: "text", lines: 1 }) },
      });
      expect(kept).toBe("updated");
    };
    // The sweep's first statement is its listing of stale rows: the finish lands right after it.
    const statement = (stmt: D1PreparedStatement): D1PreparedStatement =>
      new Proxy(stmt, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target);
          if (typeof value !== "function") return value;
          if (prop === "bind") return (...args: unknown[]) => statement(value.apply(target, args));
          return async (...args: unknown[]) => {
            const out = await value.apply(target, args);
            await finishFirst();
            return out;
          };
        },
      });
    const db = new Proxy(env.DB, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop === "prepare") return (query: string) => statement(target.prepare(query));
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await sweepAbandonedUploads(Object.create(env, { DB: { value: db } }), Date.now());
    expect(finished).toBe(true);
    const row = await getAttachmentRow(env.DB, tenantId, racing.id);
    expect(row?.status).toBe("ready");
    expect(await env.BUCKET.head(racing.r2Key)).not.toBeNull();
    // The one still open is gone, row and bytes.
    expect(await getAttachmentRow(env.DB, tenantId, abandoned.id)).toBeNull();
    expect(await env.BUCKET.head(abandoned.r2Key)).toBeNull();
  });

  it("keeps the row while it removes the bytes, and a finish landing then is refused", async () => {
    const { tenantId, key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    const late = await staleUpload(tenantId, conv, "late.txt");
    // The finish lands as the sweep removes the bytes (its first R2 delete naming them).
    let seen: { rowThere: boolean; finished: Awaited<ReturnType<typeof finishAttachment>> } | null = null;
    const bucket = new Proxy(env.BUCKET, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop === "delete")
          return async (keys: string | string[]) => {
            if (!seen && [keys].flat().includes(late.r2Key))
              seen = {
                rowThere: (await getAttachmentRow(env.DB, tenantId, late.id)) !== null,
                finished: await finishAttachment(env.DB, {
                  tenantId,
                  id: late.id,
                  change: { status: "ready", size: 11, facts: JSON.stringify({ kind: "text", lines: 1 }) },
                }),
              };
            return target.delete(keys);
          };
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await sweepAbandonedUploads(Object.create(env, { BUCKET: { value: bucket } }), Date.now());
    expect(seen).toEqual({ rowThere: true, finished: "missing" });
    expect(await getAttachmentRow(env.DB, tenantId, late.id)).toBeNull();
    expect(await env.BUCKET.head(late.r2Key)).toBeNull();
  });
});
