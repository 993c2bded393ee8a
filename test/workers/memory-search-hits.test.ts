// Every kind of memory_search hit (message, note, episode, PDF page) names a call that works: the
// test runs memory_search through the model, then each named call, and checks it returns the hit.
import { env } from "cloudflare:workers";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { recordEpisode } from "../../services/memory/notes";
import { runExtractJob } from "../../workers/summarizer/extract";
import { api, createConversation, eventually, newTenant, send, turnMessages } from "./helpers";
import { ofType, resultText } from "../blocks";
import type { ToolResultBlock } from "../../core/types";

const toolResult = (r: { text: string }) => ofType(turnMessages(r)[2].content[0], "tool_result");

async function pdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= 3; i++)
    doc
      .addPage([300, 200])
      .drawText(i === 2 ? "the axolotl clause lives here" : `filler page ${i}`, { x: 20, y: 100, font, size: 12 });
  return doc.save();
}

/** Runs each `name {json}` step of a hit's "full text:" line as its own turn; the last result. */
async function follow(id: string, line: string, key: string) {
  const steps = [...line.matchAll(/(\w+) (\{[^}]*\})/g)];
  expect(steps.length).toBeGreaterThan(0);
  let last: ToolResultBlock | undefined;
  for (const [, name, args] of steps) {
    last = toolResult(await send(id, `@tool ${name} ${args}`, key));
    expect(last.is_error, `${name} ${args}: ${last.content}`).toBeFalsy();
  }
  return resultText(last!);
}

describe("memory_search hits", () => {
  it("name, for every kind, a call that returns the hit's content", async () => {
    const key = await newTenant();
    const { tenantForKey } = await import("../../services/keys/auth");
    const tenantId = (await tenantForKey(env as Env, key))!;
    const elsewhere = await createConversation(undefined, key);
    await send(elsewhere, "the axolotl message: budget is 4411 credits", key);
    await api("POST", "/v1/memory", { text: "axolotl note: the vault code is 7719" }, { key });
    await recordEpisode(env, {
      tenantId,
      conversationId: elsewhere,
      foldJobId: `fold_${crypto.randomUUID()}`,
      throughSeq: 2,
      summary: "axolotl episode: the team chose plan B",
      at: new Date().toISOString(),
    });
    const up = await api("POST", `/v1/conversations/${elsewhere}/attachments?name=terms.pdf`, await pdf(), {
      key,
      raw: true,
      headers: { "content-type": "application/pdf" },
    });
    expect(up.status).toBe(201);
    await runExtractJob({ kind: "extract", tenantId, attachmentId: up.json.id, fromPage: 1, toPage: 3 }, env as Env);

    // A fresh conversation: nothing but the core tools is active in it.
    const id = await createConversation(undefined, key);
    const found = toolResult(await send(id, `@tool memory_search {"query":"axolotl","limit":10}`, key))
      .content as string;
    const lines = found.split("\n");
    const callFor = (label: RegExp) => {
      const i = lines.findIndex((l) => label.test(l));
      expect(i, `${label} in:\n${found}`).toBeGreaterThan(-1);
      return lines[i + 1].replace(/^\s*full text: /, "");
    };
    const expected: [RegExp, string][] = [
      [/seq 1 \(user/, "budget is 4411 credits"],
      [/^\d+\. note /, "the vault code is 7719"],
      [/^\d+\. episode /, "the team chose plan B"],
      [/^\d+\. page 2 of PDF /, "the axolotl clause lives here"],
    ];
    for (const [label, content] of expected)
      expect(await follow(id, callFor(label), key), String(label)).toContain(content);
  });

  it("said picks whose words rank first", async () => {
    const key = await newTenant();
    const conv = await createConversation(undefined, key);
    const { messages } = (
      await api(
        "POST",
        `/v1/conversations/${conv}/import`,
        {
          messages: [
            { role: "user", text: "my quokka budget is 90" },
            { role: "assistant", text: "A quokka budget of 90 for quokka food, quokka toys and quokka care." },
          ],
        },
        { key },
      )
    ).json;
    const reader = await createConversation(undefined, key);
    // The position of each imported message in the answer: the hit that names it first ranks first.
    const order = async (args: string) => {
      const text = String(toolResult(await send(reader, `@tool memory_search ${args}`, key)).content);
      return messages.map((m) => text.indexOf(m.id));
    };
    const [user, assistant] = await order('{"query":"quokka budget"}');
    expect(user).toBeGreaterThan(-1);
    expect(user).toBeLessThan(assistant);
    const [user2, assistant2] = await order('{"query":"quokka budget","said":"assistant"}');
    expect(assistant2).toBeGreaterThan(-1);
    expect(assistant2).toBeLessThan(user2 === -1 ? Infinity : user2);
  });

  it("the model's own search results, carried back as tool results, do not outrank the person's words", async () => {
    const key = await newTenant();
    const a = await createConversation(undefined, key);
    await send(a, "My commute to the office takes 45 minutes by bicycle along the canal.", key);
    const b = await createConversation(undefined, key);
    // The escapes keep the person's own @tool line in b from holding the words.
    const call = '@tool memory_search {"query":"\\u0063ommute \\u0062icycle \\u0063anal"}';
    for (let i = 0; i < 4; i++) expect(String(toolResult(await send(b, call, key)).content)).toContain("commute");
    const hits = async () =>
      (await api("GET", "/v1/search?q=commute%20bicycle%20canal&limit=20", undefined, { key })).json.data;
    // Every carrier is indexed (found, under the role its message has in the transcript), and the original ranks first.
    const found = await eventually(async () => {
      const page = await hits();
      return page.filter((h) => h.conversationId === b && h.role === "user").length === 4 ? page : null;
    });
    expect(found[0].conversationId).toBe(a);
    expect(found.every((h) => h.role === "user" || h.role === "assistant")).toBe(true);
  });
});
