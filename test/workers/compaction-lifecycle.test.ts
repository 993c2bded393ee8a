// The in-turn compactor across a turn's steps, inside workerd against the offline model (strict on
// thinking signatures and prefixes): thinking produced after a pass goes back while the pass
// stands, the turn's task prompt and every label's restoring call survive several passes, and a
// pass that can cut nothing adds nothing.
import { describe, expect, it } from "vitest";
import type { ContentBlock, ModelRequest, WireMessage } from "../../core/types";
import { isThinkingBlock } from "../../core/types";
import { ofType } from "../blocks";
import { api, createConversation, send, sendSseEvents, transcript } from "./helpers";

const upload = async (id: string, name: string, body: string) =>
  (
    await api("POST", `/v1/conversations/${id}/attachments?name=${name}`, body, {
      raw: true,
      headers: { "content-type": "text/plain" },
    })
  ).json.id as string;

/** The turn's requests as sent, oldest first, with whether a compaction stood in for part of each. */
async function sentRequests(id: string): Promise<{ compacted: boolean; request: ModelRequest }[]> {
  const list = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data.reverse();
  const out: { compacted: boolean; request: ModelRequest }[] = [];
  for (const s of list)
    out.push({
      compacted: s.compacted === true,
      request: (await api("GET", `/v1/conversations/${id}/prompts/${s.id}`)).json as unknown as ModelRequest,
    });
  return out;
}
const blocksOf = (m: WireMessage): ContentBlock[] =>
  typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
const stopReason = (events: Awaited<ReturnType<typeof sendSseEvents>>) =>
  ofType(events.at(-1)?.data, "turn_end").stop_reason;

describe("the in-turn compactor over a turn", () => {
  it("sends back the thinking of a reply to a compacted request in the next step", async () => {
    const id = await createConversation({
      model: "offline-64k",
      contextWindowTokens: 64_000,
      outputReserveTokens: 4_000,
    });
    const att = await upload(
      id,
      "a.txt",
      Array.from({ length: 500 }, (_, i) => `row ${i} ${"measurement ".repeat(7)}`).join("\n"),
    );
    const big = [1, 121, 241, 361].map((f) => `@tool file_read {"attachment_id":"${att}","lines":"${f}-${f + 119}"}`);
    const small: string[] = [];
    for (let i = 0; i < 4; i++)
      small.push(`@tool file_read {"attachment_id":"${await upload(id, `s${i}.txt`, `small ${i}`)}","lines":"1-1"}`);
    const events = await sendSseEvents(id, `read these files\n@tools-per-step 4\n${[...big, ...small].join("\n")}`);
    expect(events.filter((e) => e.type === "compaction")).toHaveLength(1);
    expect(stopReason(events)).toBe("end_turn");
    const reply = (await transcript(id)).filter((m) => m.role === "assistant")[1]; // the reply to the compacted request
    const produced = reply.content.filter((b) => isThinkingBlock(b as ContentBlock)).length;
    expect(produced).toBeGreaterThan(0);
    const sent = await sentRequests(id);
    expect(sent[1].compacted).toBe(true);
    // The next step: the pass still stands, and the reply goes back with its thinking.
    const next = sent[2];
    expect(next.compacted).toBe(true);
    const messages = next.request.messages;
    const latest = messages[messages.map((m) => m.role).lastIndexOf("assistant")];
    expect(blocksOf(latest).filter(isThinkingBlock)).toHaveLength(produced);
  });

  it("keeps the turn's task prompt whole and every label's restoring call over several passes", async () => {
    const id = await createConversation({
      model: "offline-64k",
      contextWindowTokens: 64_000,
      outputReserveTokens: 4_000,
    });
    expect((await send(id, "hello there")).status).toBe(200); // the task is not messages[0]
    const batches: string[] = [];
    for (let b = 0; b < 24; b++)
      batches.push(
        await upload(
          id,
          `batch-${b}.txt`,
          Array.from({ length: 500 }, (_, i) => `batch ${b} row ${i} ${"measurement ".repeat(6)}`).join("\n"),
        ),
      );
    const calls = batches.map((att) => `@tool file_read {"attachment_id":"${att}","lines":"1-500"}`).join("\n");
    const task = `Tally every batch: ${batches.join(", ")}.\n@tools-per-step 4\n${calls}`;
    const events = await sendSseEvents(id, task);
    expect(events.filter((e) => e.type === "compaction").length).toBeGreaterThanOrEqual(3);
    const last = (await sentRequests(id)).at(-1)!.request;
    const text = JSON.stringify(last.messages);
    expect(text).toContain(JSON.stringify(task));
    expect(text.split("<turn_state>")).toHaveLength(2); // each pass's state replaced the one before
    const labels = text.match(/\[TRUNCATED — [^\]]*\]/g) ?? [];
    expect(labels.length).toBeGreaterThan(0);
    for (const label of labels) expect(label).toMatch(/conversation_read \{[^}]*\} returns the original\]$/);
  });

  /** One turn reading three 4,500-char parts of dense text in parallel: protected results, past the trigger. */
  async function denseTurn(settings: Record<string, unknown>) {
    const common =
      "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然作方成者多日都同三小军二无同么经法当起与好看学进种将还分此心前面又定见只主没公从";
    const body = Array.from(
      { length: 300 },
      (_, i) => `${i} ${Array.from({ length: 40 }, (_, k) => common[(i * 7 + k * 3) % common.length]).join("")}`,
    ).join("\n");
    const id = await createConversation({
      model: "offline-16k",
      contextWindowTokens: 16_000,
      outputReserveTokens: 4_000,
      ...settings,
    });
    const att = await upload(id, "cjk.txt", body);
    const calls = [0, 1, 2].map(
      (k) => `@tool file_read {"attachment_id":"${att}","lines":"${k * 100 + 1}-${k * 100 + 100}"}`,
    );
    const events = await sendSseEvents(id, `read the three parts\n${calls.join("\n")}`);
    const passes = events.filter((e) => e.type === "compaction").map((e) => ofType(e.data, "compaction"));
    expect(events.find((e) => e.type === "error")).toBeUndefined();
    expect(stopReason(events)).toBe("end_turn");
    return { id, passes, sent: await sentRequests(id) };
  }

  it("adds no turn state when a pass can cut nothing: a turn whose requests fit runs to its end", async () => {
    // At 1.5 chars a token the results are past the trigger, yet together within the budget:
    // nothing may be cut, and the requests fit the window as they are.
    const { id, passes, sent } = await denseTurn({ charsPerToken: 1.5 });
    expect(passes.length).toBeGreaterThan(0);
    expect(passes.every((p) => p.targets === 0 && p.tokensSaved === 0)).toBe(true);
    for (const { request } of sent) expect(JSON.stringify(request)).not.toContain("<turn_state>");
    // Nothing was compacted: History shows no compaction card.
    const cards = (await api("GET", `/v1/conversations/${id}/timeline`)).json.data;
    expect(cards.filter((c) => c.type === "compaction")).toEqual([]);
  });

  it("cuts protected results that together pass the whole budget, naming each one's restoring call", async () => {
    // At the model's own (denser) estimate the three results together pass the budget.
    const { passes, sent } = await denseTurn({});
    expect(passes).toHaveLength(1);
    expect(passes[0].targets).toBe(3);
    const labels = JSON.stringify(sent.at(-1)!.request.messages).match(/\[TRUNCATED — [^\]]*\]/g) ?? [];
    expect(labels).toHaveLength(3);
    for (const label of labels) expect(label).toMatch(/conversation_read \{[^}]*\} returns the original\]$/);
  });
});
