// The cortex's query words and snippet marks, on node:sqlite with the shard's own migrations:
// - a query word repeated in another case is one word (FTS5 folds case), so it counts once;
// - the private-use characters FTS5 marks a match with may be the text's own: a text holding them
//   gets matches only where FTS5 matched, and its own characters are never shown as brackets.
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { d1Over, migrateShard } from "../../scripts/bench/sqlite-d1.mjs";
import { queryWords, searchCortexPage, upsertDocs } from "../../services/cortex/search-index";
import { note } from "../cortex-docs";

const shard = () => d1Over(migrateShard(new DatabaseSync(":memory:")));

describe("query words", () => {
  it("count a word repeated in another case once", async () => {
    expect(queryWords("Zebra zebra ZEBRA okapi")).toEqual(["Zebra", "okapi"]);
    const db = shard();
    const tenant = "ten_case";
    await upsertDocs(db, [
      note(tenant, "a", "a zebra grazes"),
      note(tenant, "b", "an okapi hides"),
      note(tenant, "c", "a zebra and an okapi"),
      note(tenant, "d", "nothing here at all"),
    ]);
    const scores = async (q: string) =>
      (await searchCortexPage(db, tenant, { q, limit: 10 })).hits.map((h) => [h.id, h.score]);
    expect(await scores("Zebra zebra ZEBRA okapi")).toEqual(await scores("zebra okapi"));
  });
});

describe("snippet marks", () => {
  it("are FTS5's matches only, never the text's own private-use characters", async () => {
    const db = shard();
    const tenant = "ten_marks";
    await upsertDocs(db, [note(tenant, "logo", "logo \uE000corp\uE001 and the wombat")]);
    const [hit] = (await searchCortexPage(db, tenant, { q: "wombat", limit: 5 })).hits;
    expect(hit.snippet).toBe("logo \uE000corp\uE001 and the [wombat]");
    expect(hit.matches).toEqual([[hit.snippet.indexOf("[wombat]"), hit.snippet.length]]);
    for (const [from, to] of hit.matches!) expect(hit.snippet.slice(from, to)).toBe("[wombat]");
  });

  it("leave the text's own characters as they are around a match, in either order", async () => {
    const db = shard();
    const tenant = "ten_marks_2";
    await upsertDocs(db, [note(tenant, "x", "see \uE001 the wombat \uE000 then")]);
    const [hit] = (await searchCortexPage(db, tenant, { q: "wombat", limit: 5 })).hits;
    expect(hit.snippet).toBe("see \uE001 the [wombat] \uE000 then");
    expect(hit.matches).toEqual([[hit.snippet.indexOf("["), hit.snippet.indexOf("]") + 1]]);
  });
});
