// A fold whose region holds messages far larger than an RPC value may be (32 MiB): the object sends
// the summarizer only the bounded excerpts and the boundary, so the fold still proceeds.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import { api, createConversation, inConversation } from "./helpers";

const MIB = 1 << 20;
const meta = async (id: string) => (await api("GET", `/v1/conversations/${id}`)).json;
const jobOf = (id: string, jobId: string) => ({
  kind: "fold" as const,
  jobId,
  tenantId: "dev",
  conversationId: id,
  requestedAt: new Date().toISOString(),
});

describe("a fold over a region larger than an RPC value", () => {
  it("folds one threshold of growth, however large the messages are", async () => {
    const id = await createConversation();
    const jobId = await inConversation(id, async (i) => {
      for (let k = 0; k < 3; k++)
        await i.record.append([
          { role: "user", content: [{ type: "text", text: String(k).repeat(7 * MIB) }] },
          { role: "assistant", content: [{ type: "text", text: "z".repeat(7 * MIB) }] },
        ]);
      for (let k = 0; k < 6; k++)
        await i.record.append([
          { role: "user", content: [{ type: "text", text: `question ${k}` }] },
          { role: "assistant", content: [{ type: "text", text: `answer ${k}` }] },
        ]);
      await i.fold.maybeDispatch();
      return i.store.getLease()?.jobId;
    });
    expect(jobId).toBeTruthy();
    const outcome = await runFoldJob(jobOf(id, jobId!), env as Env, { attempts: 1 });
    expect(outcome).toEqual({ applied: true, reason: "folded" });
    const m = await meta(id);
    expect(m.foldCount).toBe(1);
    // The first exchange (14 MiB) is over the threshold on its own: that one exchange is folded.
    expect(m.summarizedThroughMessage).toBe(2);
    expect(m.summary!.length).toBeGreaterThan(0);
    // The next fold is dispatched and proceeds in turn.
    const next = await inConversation(id, async (i) => {
      await i.fold.maybeDispatch();
      return i.store.getLease()?.jobId;
    });
    expect(next).toBeTruthy();
    expect(next).not.toBe(jobId);
    expect(await runFoldJob(jobOf(id, next!), env as Env, { attempts: 1 })).toEqual({
      applied: true,
      reason: "folded",
    });
    expect((await meta(id)).summarizedThroughMessage).toBe(4);
  }, 120_000);
});
