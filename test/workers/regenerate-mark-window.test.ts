// Reads taken while a regenerate writes its mark: the regenerate appends the prompt's copy (R2, then
// the index) and only then writes the head that marks the replaced exchange superseded. A transcript
// page or a /replay read in between must not carry the copy after that exchange, unmarked.
import { describe, expect, it } from "vitest";
import { holdSupersedeHeadWrite } from "./hold-supersede-write";
import { api, createConversation, newTenantWithId, send } from "./helpers";

type Page = { data: { seq: number; role: string; superseded?: true }[]; next: number | null };
type Answer = Awaited<ReturnType<typeof api>>;

/** A conversation of one exchange, regenerated; `paths` read while the regenerate's mark is held. */
async function readDuringMark(paths: (conv: string) => string[]) {
  const { key } = await newTenantWithId();
  const conv = await createConversation(undefined, key);
  expect((await send(conv, "What do herons eat?", key)).status).toBe(200);
  const { reached, release } = await holdSupersedeHeadWrite(conv);
  const regenerating = api("POST", `/v1/conversations/${conv}/messages`, { regenerate: true }, { key });
  const answers: Answer[] = [];
  try {
    await reached;
    for (const path of paths(conv)) answers.push(await api("GET", path, undefined, { key }));
  } finally {
    release();
  }
  expect((await regenerating).status).toBe(200);
  for (const answer of answers) expect(answer.status, answer.text).toBe(200);
  return { conv, key, answers };
}

describe("reads during a regenerate's mark", () => {
  it("the transcript ends before the copy of the prompt, as the conversation's messageCount does", async () => {
    const { answers } = await readDuringMark((conv) => [
      `/v1/conversations/${conv}`,
      `/v1/conversations/${conv}/messages?after=0&limit=100`,
    ]);
    const [meta, page] = answers;
    const listed = page.json as Page;
    // Each prompt shown once: no user message after the reply that asks the same again.
    expect(listed.data.filter((m) => !m.superseded).map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(listed.data).toHaveLength((meta.json as { messageCount: number }).messageCount);
    expect(listed.next).toBeNull();
  });

  it("/replay leaves out the exchange being replaced: what the regenerate's request carries", async () => {
    const { conv, key, answers } = await readDuringMark((conv) => [`/v1/conversations/${conv}/replay`]);
    const replayed = (answers[0].json as { messages: { role: string }[] }).messages;
    const prompts = await api("GET", `/v1/conversations/${conv}/prompts`, undefined, { key });
    expect(replayed.map((m) => m.role)).toEqual(["user"]);
    expect(replayed).toHaveLength(Number(prompts.json.data[0].messages));
  });
});
