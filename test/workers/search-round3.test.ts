// GET /v1/search and memory_search on texts that used to lose their match: a long question's rare
// word past its 32nd word, an identifier across the index's chunk limit, a snippet of one huge
// token, and a bracket of the text itself taken for the match.
import { describe, expect, it } from "vitest";
import { toolText } from "./attachment-helpers";
import { api, createConversation, eventually, newTenant, send } from "./helpers";

interface Hit {
  id: string;
  snippet: string;
  matches: [number, number][];
}

const search = async (key: string, q: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}`, undefined, { key })).json as unknown as {
    data: Hit[];
    next: string | null;
  };

/** Imports `text` as a user message of a new conversation (with a reply); its id once a search for `marker` finds it. */
async function indexed(key: string, text: string, marker: string): Promise<string> {
  const conv = (await api("POST", "/v1/conversations", {}, { key })).json.id;
  const imported = await api(
    "POST",
    `/v1/conversations/${conv}/import`,
    {
      messages: [
        { role: "user", text },
        { role: "assistant", text: "Noted." },
      ],
    },
    { key },
  );
  expect(imported.status, JSON.stringify(imported.json)).toBeLessThan(300);
  const id = String(imported.json.messages[0].id);
  await eventually(async () => (await search(key, marker)).data.some((h) => h.id === id));
  return id;
}

describe("search, round 3", { timeout: 60_000 }, () => {
  it("finds the rare word of a long question past its 32nd word", async () => {
    const key = await newTenant();
    const id = await indexed(key, "My new kayak is called the zorblatt.", "kayak");
    const q =
      "I was wondering if you could please remind me of what it was that we talked about the other day " +
      "when I told you all about the name that I gave to my zorblatt";
    expect((await search(key, q)).data.map((h) => h.id)).toContain(id);
  });

  it("finds an identifier that crosses the index's chunk limit", async () => {
    const key = await newTenant();
    const text = `${"lorem ".repeat(3332)}ab zz INV-77123 quokkazebra`;
    expect(text.indexOf("INV-77123")).toBe(19_998);
    const id = await indexed(key, text, "quokkazebra");
    const r = await search(key, "INV-77123");
    expect(r.data.map((h) => h.id)).toContain(id);
    expect(r.data.find((h) => h.id === id)?.snippet).toContain("[INV-77123]");
  });

  it("cuts a snippet of one huge token to about 300 characters around the match", async () => {
    const key = await newTenant();
    const id = await indexed(key, `here is the key ${"QUJD".repeat(4000)} for the vaultzebra`, "vaultzebra");
    const [hit] = (await search(key, "vaultzebra")).data;
    expect(hit.id).toBe(id);
    expect(hit.snippet.length).toBeLessThanOrEqual(300);
    expect(hit.snippet).toContain("[vaultzebra]");
  });

  it("marks the real match, not a bracket of the text, in the API and in memory_search", async () => {
    const key = await newTenant();
    const text = `see [1] ${"QUJD".repeat(100)} the zorblatt is here ${"QUJD".repeat(100)} end`;
    const id = await indexed(key, text, "zorblatt");
    const [hit] = (await search(key, "zorblatt")).data;
    expect(hit.id).toBe(id);
    expect(hit.snippet).toContain("[zorblatt]");
    // `matches` says where: the one match, never the text's own "[1]".
    expect(hit.matches.map(([s, e]) => hit.snippet.slice(s, e))).toEqual(["[zorblatt]"]);
    const conv = await createConversation(undefined, key);
    const out = toolText(await send(conv, `@tool memory_search {"query":"zorblatt"}`, key));
    expect(out).toContain("[zorblatt]");
  });
});
