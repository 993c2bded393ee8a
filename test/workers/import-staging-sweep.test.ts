// Staged import chunks a dead request left behind: the cron tick sweeps them once they are far older
// than any import runs, and never an import still staging, nor any other key of any tenant.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { importStagingKey, importStagingPrefix } from "../../r2-layout";
import { STAGED_IMPORT_MAX_AGE_MS, stageTranscript, type StagedImport } from "../../services/transfer/import-staging";
import { runScheduled } from "../../workers/chat/scheduled";
import { r2KeysUnder } from "./helpers";

const exchange = (i: number) => [
  { role: "user", content: `question ${i} ${"q".repeat(40)}` },
  { role: "assistant", content: [{ type: "text", text: `answer ${i} ${"a".repeat(40)}` }] },
];

/** Stages a transcript of `exchanges` exchanges, as the import route does, and (like a dying request) leaves it. */
async function stage(tenantId: string, exchanges: number): Promise<StagedImport> {
  const messages = Array.from({ length: exchanges }, (_, i) => exchange(i)).flat();
  const body = new Blob([JSON.stringify({ messages })]).stream();
  return stageTranscript(env.BUCKET, { tenantId, body, format: "json" });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const tick = (at: number) =>
  runScheduled(createScheduledController({ scheduledTime: at, cron: "0 * * * *" }), env as Env);

describe("the cron tick's sweep of staged imports", () => {
  it("removes staging a dead import left long ago, keeps fresh and still-staging imports and every other key", async () => {
    // Another tenant's objects, and this tenant's own conversation, beside the staging.
    const others = [
      "tenants/t-sweep-other/conversations/conv_x/head.json",
      "tenants/t-sweep-other/attachments/att_x/blob",
      "tenants/t-sweep-dead/conversations/conv_y/head.json",
    ];
    for (const key of others) await env.BUCKET.put(key, "keep");

    const dead = await stage("t-sweep-dead", 600); // 1,200 messages: three chunks
    expect(dead.chunks).toBe(3);
    const stalled = await stage("t-sweep-dead", 10); // started as long ago, but still writing (below)
    await pause(50);
    const cutoff = Date.now();
    await pause(50);
    const fresh = await stage("t-sweep-fresh", 10);
    // The stalled import's next chunk lands after the cutoff: it is still staging.
    await env.BUCKET.put(importStagingKey("t-sweep-dead", stalled.importId, stalled.chunks), "[]");

    // Nothing is old enough an hour on.
    expect((await tick(cutoff + 60 * 60_000)).importsSwept).toBe(0);
    expect(await r2KeysUnder(importStagingPrefix("t-sweep-dead", dead.importId))).toHaveLength(3);

    // Past the safe age of the dead import only.
    const result = await tick(cutoff + STAGED_IMPORT_MAX_AGE_MS);
    expect(result.importsSwept).toBe(1);
    expect(await r2KeysUnder(importStagingPrefix("t-sweep-dead", dead.importId))).toEqual([]);
    expect(await r2KeysUnder(importStagingPrefix("t-sweep-dead", stalled.importId))).toHaveLength(stalled.chunks + 1);
    expect(await r2KeysUnder(importStagingPrefix("t-sweep-fresh", fresh.importId))).toHaveLength(fresh.chunks);
    for (const key of others) expect(await env.BUCKET.head(key)).not.toBeNull();

    // Its marker went with it: a later tick finds nothing more of it.
    expect((await tick(cutoff + STAGED_IMPORT_MAX_AGE_MS)).importsSwept).toBe(0);
  });
});
