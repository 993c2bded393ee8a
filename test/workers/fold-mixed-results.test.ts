// A fold never cuts between a tool_use and its tool_result. An imported Anthropic transcript often
// answers each step's calls and asks the next question in one user message (results, then text):
// such a message continues the step before it, so a fold that cut right before it would leave the
// tail opening on results whose calls were folded away, and every later request would be refused.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import { api, inConversation, newTenantWithId, send } from "./helpers";

type Imported = { role: "user" | "assistant"; content: unknown };

/** user, then 12 steps: a call, then its result with the next question in one message; then a reply. */
function mixedTranscript(): Imported[] {
  const messages: Imported[] = [{ role: "user", content: "start" }];
  for (let i = 0; i < 12; i++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `step ${i} ${"lorem ipsum ".repeat(40)}` },
        { type: "tool_use", id: `call_${i}`, name: "lookup", input: { q: String(i) } },
      ],
    });
    messages.push({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: `call_${i}`, content: `result ${i}` },
        { type: "text", text: `and now question ${i + 1}` },
      ],
    });
  }
  messages.push({ role: "assistant", content: "done" });
  return messages;
}

/** Dispatches the fold the settings call for and runs it; its outcome, or null when none was dispatched. */
async function foldNow(id: string, tenantId: string) {
  const jobId = await inConversation(id, async (i) => {
    await i.fold.maybeDispatch();
    return i.store.getLease()?.jobId;
  });
  if (!jobId) return null;
  const job = { kind: "fold" as const, jobId, tenantId, conversationId: id, requestedAt: new Date().toISOString() };
  return runFoldJob(job, env as Env, { attempts: 1 });
}

describe("a fold over an imported transcript whose results share a message with the next question", () => {
  it("never cuts before such a message, so every later turn still goes through", async () => {
    const { tenantId, key } = await newTenantWithId();
    const imported = await api("POST", "/v1/conversations/import", { messages: mixedTranscript() }, { key });
    expect(imported.status).toBe(201);
    const id = imported.json.id;
    expect((await send(id, "first live question", key)).status).toBe(200);
    const patched = await api(
      "PATCH",
      `/v1/conversations/${id}`,
      { settings: { foldThresholdChars: 2_000, tailMessages: 4 } },
      { key },
    );
    expect(patched.status).toBe(200);
    const outcome = await foldNow(id, tenantId);
    for (const prompt of ["second live question", "third live question"]) {
      const turn = await send(id, prompt, key);
      expect(turn.status, turn.text.slice(0, 300)).toBe(200);
    }
    // Only the live prompts start turns here: a fold may end right before one and nowhere earlier.
    const through = (await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.summarizedThroughMessage;
    if (outcome?.applied) expect(through).toBeGreaterThanOrEqual(26);
    else expect(through ?? 0).toBe(0);
  }, 60_000);
});
