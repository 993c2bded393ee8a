// A search hit says whose words it found: `from` is "person", "assistant" or "tool" (words no
// person typed: a user message that carries tool results, a sub-agent's task), read from the
// role the cortex stores. `role` stays the transcript's (a tool result's hit still says "user"), so
// a client no longer guesses from the snippet, which mislabelled a person's "toolbox…" message and
// never matched a real tool result (services/cortex/search-index.ts hitFrom).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { refusedRole, searchCortexPage, upsertDocs } from "../../services/cortex/search-index";
import { shardDatabase, shardNames } from "../../services/cortex/routing";
import { cortexFusionFor } from "../../services/semantic/select";
import { message, note } from "../cortex-docs";
import { api, eventually, newTenant } from "./helpers";

const hitsFor = async (key: string, q: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}`, undefined, { key })).json.data;

describe("GET /v1/search: whose words a message hit holds", () => {
  it("tells the person's message from a tool result's carrier and the assistant's reply", async () => {
    const key = await newTenant();
    const messages = [
      { role: "user", content: "toolbox quorvalent: which wrench fits the sink?" },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "call_q", name: "memory_search", input: { query: "wrench" } }],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "call_q", content: "zintrabolt: a 19 mm wrench" }],
      },
      { role: "assistant", content: [{ type: "text", text: "Plexiwhorl: the 19 mm wrench fits." }] },
    ];
    const r = await api("POST", "/v1/conversations/import", JSON.stringify({ messages }), {
      key,
      raw: true,
      headers: { "content-type": "application/json" },
    });
    expect(r.status, r.text).toBe(201);
    const only = async (q: string) =>
      eventually(async () => {
        const found = (await hitsFor(key, q)).filter((h) => h.conversationId === r.json.id);
        return found.length === 1 ? found[0] : null;
      });

    const person = await only("quorvalent");
    expect(person.snippet.startsWith("toolbox")).toBe(true);
    expect(person).toMatchObject({ role: "user", from: "person" });
    expect(await only("zintrabolt")).toMatchObject({ role: "user", from: "tool" });
    expect(await only("plexiwhorl")).toMatchObject({ role: "assistant", from: "assistant" });
  });
});

describe("searchCortexPage: `from` on every path", () => {
  // A document's id is its kind and ref id, unique in the shard as real ref ids are: this run's own
  // ref ids, so no other file's fixed ids (another tenant's "msg_asst") share a row with these.
  const run = Date.now().toString(36);
  const ids = {
    person: `msg_person_${run}`,
    asst: `msg_asst_${run}`,
    tool: `msg_tool_${run}`,
    refusedPerson: `msg_refused_person_${run}`,
    refusedTool: `msg_refused_tool_${run}`,
    note: `note_${run}`,
  };
  const docs = (t: string) => [
    message(t, ids.person, "user", "quillfen marrow"),
    message(t, ids.asst, "assistant", "quillfen sorrel"),
    message(t, ids.tool, "tool", "quillfen tallow"),
    message(t, ids.refusedPerson, refusedRole("user"), "quillfen burrow"),
    message(t, ids.refusedTool, refusedRole("tool"), "quillfen furrow"),
    note(t, ids.note, "quillfen hollow"),
  ];
  const expected = {
    [ids.person]: ["user", "person"],
    [ids.asst]: ["assistant", "assistant"],
    [ids.tool]: ["user", "tool"],
    [ids.refusedPerson]: ["user", "person"],
    [ids.refusedTool]: ["user", "tool"],
    [ids.note]: [null, null],
  };
  const byId = (hits: { id: string; role: string | null; from?: string | null }[]) =>
    Object.fromEntries(hits.map((h) => [h.id, [h.role, h.from]]));

  it("the lexical ranking's hits, and the fused ones, the vector ranking's alone among them", async () => {
    const db = shardDatabase(env, shardNames(env)[0]);
    const t = `ten_hitfrom${Date.now()}`;
    await upsertDocs(db, docs(t));
    const lexical = await searchCortexPage(db, t, { q: "quillfen", limit: 10 });
    expect(byId(lexical.hits)).toEqual(expected);
    const fusion = cortexFusionFor({ SEMANTIC_SEARCH: "local" }, db);
    expect(byId((await searchCortexPage(db, t, { q: "quillfen", limit: 10, fusion })).hits)).toEqual(expected);
    // No word in common: every hit is the vector ranking's alone.
    const semantic = await searchCortexPage(db, t, { q: "kayak paddle river", limit: 10, fusion });
    expect(semantic.hits).toHaveLength(6);
    expect(byId(semantic.hits)).toEqual(expected);
  });
});
