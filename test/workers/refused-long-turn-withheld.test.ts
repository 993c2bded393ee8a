// A refused turn is withheld from the model's reads (memory_get, conversation_read) however long
// it is: an imported turn of 250 tool steps puts its prompt 500 seqs before its refusal, and its
// prompt is withheld as a short turn's is, while the turns around it read as they were.
import { expect, it } from "vitest";
import { ofType } from "../blocks";
import { api, importText, createConversation, eventually, newTenant, send, turnMessages } from "./helpers";

const toolResultText = (r: Parameters<typeof turnMessages>[0]) =>
  String(ofType(turnMessages(r)[2].content[0], "tool_result").content);

async function refusedImport(key: string, steps: number, word: string) {
  const messages: unknown[] = [
    { role: "user", content: "hello there" },
    { role: "assistant", content: "hi" },
    { role: "user", content: `the forbidden plan ${word}` },
  ];
  for (let i = 0; i < steps; i++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${i}`, name: "lookup", input: { n: i } }],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: `step ${i}` }],
    });
  }
  messages.push({ role: "assistant", content: "I can't help with that.", stopReason: "refusal" });
  messages.push({ role: "user", content: "something else then" });
  messages.push({ role: "assistant", content: "sure" });
  const r = await importText(JSON.stringify({ messages }), key);
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
}

it("a long refused turn's prompt is withheld from the model's reads as a short one's is", {
  timeout: 120_000,
}, async () => {
  const key = await newTenant();
  const short = await refusedImport(key, 10, "quorblat");
  const long = await refusedImport(key, 250, "zimbrax");
  const promptOf = async (conv: string, word: string) =>
    eventually(async () =>
      (await api("GET", `/v1/search?q=${word}`, undefined, { key })).json.data.find((h) => h.conversationId === conv),
    );
  const shortPrompt = await promptOf(short, "quorblat");
  const longPrompt = await promptOf(long, "zimbrax");
  const other = await createConversation(undefined, key);
  const out: Record<string, string> = {};
  // The model's search leaves the long turn out (its rows are marked refused), as a short one's.
  out.longSearch = toolResultText(await send(other, '@tool memory_search {"query":"\\u007Aimbrax"}', key));
  for (const [name, id] of [
    ["short", shortPrompt.id],
    ["long", longPrompt.id],
  ] as const)
    out[name] = toolResultText(await send(other, `@tool memory_get {"id":"${id}"}`, key));
  out.longRead = toolResultText(
    await send(other, `@tool conversation_read {"conversation_id":"${long}","from_seq":3,"to_seq":3}`, key),
  );
  // The turns before and after the refused one are not withheld.
  const read = (from: number, to: number) =>
    `@tool conversation_read {"conversation_id":"${long}","from_seq":${from},"to_seq":${to}}`;
  out.before = toolResultText(await send(other, read(1, 2), key));
  out.after = toolResultText(await send(other, read(505, 506), key));
  expect(out.short).toContain("withheld");
  expect(out.longSearch).toMatch(/^no memory matches/);
  expect(out.long).toContain("withheld");
  expect(out.longRead).toContain("withheld");
  expect(out.longRead).not.toContain("zimbrax");
  expect(out.before).toContain("hello there");
  expect(out.before).not.toContain("withheld");
  expect(out.after).toContain("something else then");
  expect(out.after).not.toContain("withheld");
});
