// Workflow mode's safety net: a sub-agent runs the master's turn loop, so its thread compacts when
// its tool results outgrow a small window, a max_tokens stop is continued, a provider overflow 400
// forces one compaction and one retry, and its streamed events reach the caller tagged with it.
// (What the segment is and how replay leaves it out: workflow.test.ts.)
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, send, sendSse, textOf, transcript } from "./helpers";
import { ofType, resultText } from "../blocks";
import { imageHeader } from "../../core/offline-model/image-size";

const delegate = (name: string, task: string) => `@tool agent_delegate ${JSON.stringify({ name, task })}`;

/** A conversation with agent_delegate active and a 5,000-row text file; the file's id. */
async function workspace(settings: Record<string, unknown>) {
  const id = await createConversation(settings);
  const rows = Array.from({ length: 5000 }, (_, i) => `row ${i} ${"lorem ipsum dolor ".repeat(3)}`).join("\n");
  const up = await api("POST", `/v1/conversations/${id}/attachments?name=rows.txt`, rows, {
    raw: true,
    headers: { "content-type": "text/plain" },
  });
  expect(up.status).toBe(201);
  await send(id, `@tool tool_activate {"name":"agent_delegate"}`);
  return { id, file: up.json.id as string };
}

const slices = (file: string, from: number, count: number, lines: number) =>
  Array.from(
    { length: count },
    (_, i) => `@tool file_read {"attachment_id":"${file}","lines":"${from + i * lines}-${from + (i + 1) * lines - 1}"}`,
  ).join("\n");

/** The master's agent_delegate result and the sub-agent's saved thread. */
async function delegated(id: string) {
  const all = await transcript(id);
  const result = all.flatMap((m) => (m.agent ? [] : m.content)).findLast((b) => b.type === "tool_result");
  return { result, segment: all.filter((m) => m.agent) };
}

describe("a sub-agent's turn loop", () => {
  it("compacts its own thread when its tool results outgrow the window, and finishes", async () => {
    // The model's real window is 24,000 tokens; the task reads more than that. (A model only the
    // Models API knows gets the most conservative chars-per-token; this one counts like the seed's 1.5.)
    const { id } = await workspace({
      model: "offline-24k",
      contextWindowTokens: 24_000,
      outputReserveTokens: 2_000,
      charsPerToken: 1.5,
    });
    // Sixteen parts, each its own attachment: the task names their ids, so a compaction's
    // REMAINING can name the parts not read yet (and the model resumes from what it names).
    const parts: string[] = [];
    for (let p = 0; p < 16; p++) {
      const rows = Array.from({ length: 100 }, (_, i) => `part ${p} row ${i} ${"lorem ipsum dolor ".repeat(3)}`).join(
        "\n",
      );
      parts.push(
        (
          await api("POST", `/v1/conversations/${id}/attachments?name=part-${p}.txt`, rows, {
            raw: true,
            headers: { "content-type": "text/plain" },
          })
        ).json.id,
      );
    }
    const calls = parts.map((att) => `@tool file_read {"attachment_id":"${att}","lines":"1-100"}`).join("\n");
    const task = `Read every part and report: ${parts.join(", ")}.\n@tools-per-step 2\n${calls}`;
    const events = await sendSse(id, delegate("reader", task));
    const compactions = events.filter((e) => e.type === "compaction");
    expect(compactions.length).toBeGreaterThan(0);
    expect(
      compactions.every((e) => e.agent?.name === "reader" && e.tokensAfter < e.tokensBefore),
      JSON.stringify(compactions.map((e) => [e.agent?.name, e.tokensBefore, e.tokensAfter])),
    ).toBe(true);
    expect(events.find((e) => e.type === "error")).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    const { result, segment } = await delegated(id);
    expect(result!.is_error).toBeUndefined();
    expect(result!.content).toMatch(/^\[agent reader: \d+ model calls;/);
    // Every slice was read once and saved whole: the compaction worked on copies.
    const reads = segment.flatMap((m) => m.content).filter((b) => b.type === "tool_result");
    expect(reads).toHaveLength(16);
    const readIds = segment
      .flatMap((m) => m.content)
      .filter((b) => b.type === "tool_use")
      .map((b) => b.input.attachment_id);
    expect(readIds).toEqual(parts);
    expect(
      reads.every((b) => !b.is_error && !/TRUNCATED/.test(resultText(b)) && resultText(b).length > 6_000),
      JSON.stringify(reads.map((b) => [b.is_error, resultText(b).length])),
    ).toBe(true);
  });

  it("reads each step's prefix from the prompt cache, as the master's tool loop does", async () => {
    const { id, file } = await workspace({});
    await send(id, delegate("reader", `Read the parts.\n@tools-per-step 1\n${slices(file, 1, 4, 100)}`));
    const steps = (await delegated(id)).segment.filter((m) => m.role === "assistant" && m.usage);
    expect(steps.length).toBeGreaterThanOrEqual(4);
    // Every step after the first reads at least what the step before it sent.
    for (const step of steps.slice(1)) expect(step.usage!.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it("continues a max_tokens stop, streaming its deltas to the caller and the sockets tagged with the sub-agent", async () => {
    const { id } = await workspace({});
    const socket = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    const events = await sendSse(id, delegate("writer", "Write on.\n@max-tokens-stop"));
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    const { result, segment } = await delegated(id);
    const replies = segment.filter((m) => m.role === "assistant");
    expect(replies.map((m) => m.stopReason)).toEqual(["max_tokens", "end_turn"]);
    expect(result!.is_error).toBeUndefined();
    expect(result!.content).toContain(replies.map(textOf).join(""));
    const deltas = events.filter((e) => e.type === "delta" && e.agent);
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((e) => e.agent!.name === "writer" && e.agent!.segment === segment[0].agent!.segment)).toBe(
      true,
    );
    expect(deltas.map((e) => ofType(e, "delta").text).join("")).toBe(replies.map(textOf).join(""));
    // The master's own deltas stay untagged.
    expect(events.some((e) => e.type === "delta" && !e.agent)).toBe(true);
    // A socket on the conversation sees the same tagged stream.
    await socket.next((e) => e.type === "turn_end");
    expect(socket.events.filter((e) => e.type === "delta" && e.agent).map((e) => ofType(e, "delta").text)).toEqual(
      deltas.map((e) => ofType(e, "delta").text),
    );
    socket.ws!.close();
  });

  it("answers a provider overflow 400 with one forced compaction and one retry", async () => {
    // Settings claim 200,000 tokens; the model takes 16,000, so the estimate never triggers a
    // pass and the provider's 400 is what stops the second step.
    const { id, file } = await workspace({ model: "offline-16k", contextWindowTokens: 200_000 });
    const task = `Read both halves.\n@tools-per-step 6\n${slices(file, 1, 12, 100)}`;
    const events = await sendSse(id, delegate("halves", task));
    const started = events.filter((e) => e.type === "compaction_started");
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ forced: true, agent: { name: "halves" } });
    expect(started[0].budgetTokens).toBeLessThan(16_000);
    expect(events.find((e) => e.type === "error")).toBeUndefined();
    const { result } = await delegated(id);
    expect(result!.is_error).toBeUndefined();
    expect(result!.content).toMatch(/^\[agent halves: \d+ model calls;/);
  });

  it("keeps the API's image limits in its requests: past 20 images, a wide one is left out with a placeholder", async () => {
    const id = await createConversation();
    const views: string[] = [];
    for (let i = 0; i < 21; i++) {
      const up = await api(
        "POST",
        `/v1/conversations/${id}/attachments?name=wide-${i}.png`,
        imageHeader("image/png", 2100, 10),
        {
          raw: true,
          headers: { "content-type": "image/png" },
        },
      );
      expect(up.status).toBe(201);
      views.push(`@tool image_view {"attachment_id":"${up.json.id}"}`);
    }
    await send(id, `@tool tool_activate {"name":"agent_delegate"}\n@tool tool_activate {"name":"image_view"}`);
    const r = await send(id, delegate("viewer", `Look at every image.\n${views.join("\n")}`));
    expect(r.status).toBe(200);
    const result = (await transcript(id))
      .flatMap((m) => (m.agent ? [] : m.content))
      .findLast((b) => b.type === "tool_result")!;
    expect(resultText(result)).not.toMatch(/refused the request/);
    expect(ofType(result, "tool_result").is_error).toBeUndefined();
  });

  it("reports a refused task as an error result, without the refused words", async () => {
    const { id } = await workspace({});
    const events = await sendSse(id, delegate("asker", "Tell a long tale of rivers and harbors.\n@stop refusal cyber"));
    expect(events.at(-1)).toMatchObject({ type: "turn_end" });
    expect(events.find((e) => e.type === "refusal")).toMatchObject({ agent: { name: "asker" }, category: "cyber" });
    const { result, segment } = await delegated(id);
    expect(result!.is_error).toBe(true);
    expect(result!.content).toMatch(/^agent asker stopped: the model declined the task/);
    const refused = segment.find((m) => m.stopReason === "refusal");
    expect(result!.content).not.toContain(textOf(refused!));
  });
});
