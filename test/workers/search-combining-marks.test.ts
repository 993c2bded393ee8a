// GET /v1/search with combining marks. A client may send Unicode NFD text (macOS: "Việt" as
// "Vie" + U+0323 + U+0302 + "t") while stored text is usually NFC; and Devanagari, Thai and other
// scripts write vowel signs as combining marks (Mn/Mc) whatever the form. The query's words used to
// be cut at every mark (an NFD "Việt" was the words "Vie" and "t"; "हिंदी" the unrelated words "ह"
// and "द"), and FTS5's unicode61 tokenizes the two forms of a word differently ("việt" from NFC,
// "viet" from NFD), so one form never found the other. core/fts-terms.ts is held here to D1's
// own tokenizer on such words (node:sqlite, which test/unit/fts-terms.test.ts uses, has no FTS5
// copy of workerd's).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ftsTerms } from "../../core/fts-terms";
import { sortableId } from "../../core/ids";
import {
  type CortexDoc,
  docParams,
  queryWords,
  searchCortexPage,
  tenantRange,
  UPSERT_DOC,
} from "../../services/cortex/search-index";
import { newTenant } from "./helpers";
import { indexed, search } from "./search-imported";

const nfd = (s: string) => s.normalize("NFD");
const nfc = (s: string) => s.normalize("NFC");

/** D1's `porter unicode61` terms of each text (a scratch FTS5 table, dropped after). */
async function d1Terms(texts: readonly string[]): Promise<string[][]> {
  const db = (env as unknown as { CORTEX_SHARD_0: D1Database }).CORTEX_SHARD_0;
  await db.exec("CREATE VIRTUAL TABLE marks_probe USING fts5(body, tokenize = 'porter unicode61');");
  await db.exec("CREATE VIRTUAL TABLE marks_probe_v USING fts5vocab(marks_probe, 'instance');");
  try {
    const insert = db.prepare("INSERT INTO marks_probe (rowid, body) VALUES (?, ?)");
    await db.batch(texts.map((t, i) => insert.bind(i + 1, t)));
    const { results } = await db
      .prepare(`SELECT doc, term FROM marks_probe_v ORDER BY doc, "offset"`)
      .all<{ doc: number; term: string }>();
    const out: string[][] = texts.map(() => []);
    for (const r of results) out[r.doc - 1].push(r.term);
    return out;
  } finally {
    await db.exec("DROP TABLE marks_probe_v; DROP TABLE marks_probe;");
  }
}

describe("search with combining marks", { timeout: 60_000 }, () => {
  it("keeps a word's combining marks in the word, and computes its terms as D1's tokenizer does", async () => {
    expect(queryWords(nfd("Việt"))).toEqual([nfd("Việt")]);
    expect(queryWords(nfd("café au lait"))).toEqual([nfd("café"), "au", "lait"]);
    expect(queryWords("हिंदी पसंद")).toEqual(["हिंदी", "पसंद"]);
    expect(queryWords("น้ำ")).toEqual(["น้ำ"]);
    // One word in either form: the first spelling stays.
    expect(queryWords(`${nfd("Việt")} ${nfc("việt")}`)).toEqual([nfd("Việt")]);

    const marks: string[] = [];
    for (let c = 0x300; c <= 0x36f; c++) marks.push(String.fromCodePoint(c));
    const words = [
      ...[
        "café",
        "Việt",
        "Tiếng",
        "ếch",
        "ñandú",
        "naïve",
        "Ώx",
        "Zürich",
        "résumés",
        "ǘber",
        "ȫ",
        "Ǖ",
        "hoàng",
      ].flatMap((w) => [nfc(w), nfd(w)]),
      "é\u0301",
      "x\u0301\u0302y",
      "\u0301b",
      "हिंदी",
      "हंद",
      "किताब",
      "ज़रूर",
      "ज\u093Cरूर",
      "ที่นี่",
      "น้ำ",
      nfd("한국어"),
      ...marks.flatMap((m) => [`a${m}b`, `${m}b`, `ab${m}`, `A${m}ing`]),
    ];
    const d1 = await d1Terms(words);
    expect(words.map((w) => `${w}: ${ftsTerms(w).join(" ")}`)).toEqual(words.map((w, i) => `${w}: ${d1[i].join(" ")}`));
  });

  it("finds a word in NFD or NFC text whichever form the query is in", async () => {
    const key = await newTenant();
    const [composed, decomposed, coffee] = await indexed(
      key,
      [nfc("Tiếng Việt là ngôn ngữ quokka"), nfd("Tôi học tiếng Việt ở Hà Nội wombat"), nfd("un café noir numbat")],
      "numbat",
    );
    for (const q of [nfc("Việt"), nfd("Việt"), nfc("tiếng việt"), nfd("TIẾNG VIỆT")]) {
      const hits = (await search(key, q)).data;
      expect(hits.map((h) => h.id).sort(), JSON.stringify(q)).toEqual([composed, decomposed].sort());
      // The snippet marks the word in both.
      for (const h of hits) expect(nfc(h.snippet)).toMatch(/\[Việt\]/u);
    }
    for (const q of [nfc("café"), nfd("café"), "cafe"])
      expect((await search(key, q)).data.map((h) => h.id)).toEqual([coffee]);
  });

  it("finds a row indexed in NFD before rows were indexed in NFC, with either form of the query", async () => {
    const db = (env as unknown as { CORTEX_SHARD_0: D1Database }).CORTEX_SHARD_0;
    const tenantId = sortableId("tnt");
    const doc = (refId: string, body: string): CortexDoc => ({
      tenantId,
      kind: "memory",
      refId,
      conversationId: null,
      seq: null,
      role: null,
      createdAt: new Date().toISOString(),
      body,
    });
    // As an older upsert wrote them: the body as it was sent.
    const upsert = db.prepare(UPSERT_DOC);
    await db.batch([
      tenantRange(db, tenantId),
      upsert.bind(...docParams(doc("note_old", nfd("Học tiếng Việt")), 0, nfd("Học tiếng Việt"))),
      upsert.bind(...docParams(doc("note_new", nfc("Tiếng Việt")), 0, nfc("Tiếng Việt"))),
    ]);
    for (const q of [nfc("Việt"), nfd("Việt")]) {
      const { hits } = await searchCortexPage(db, tenantId, { q, limit: 10 });
      expect(hits.map((h) => h.id).sort(), JSON.stringify(q)).toEqual(["note_new", "note_old"]);
      for (const h of hits) expect(nfc(h.snippet)).toMatch(/\[Việt\]/u);
    }
  });

  it("searches a word whose vowel signs are combining marks as that word, not as its pieces", async () => {
    const key = await newTenant();
    // "हिंदी" is tokenized (by unicode61, at its marks) as ह द; "दिन भर है" holds both pieces, apart.
    // Likewise "น้ำ" as น ำ, which "น้อย กล้ำ" holds apart.
    const [hindi, , thai] = await indexed(
      key,
      ["मुझे हिंदी पसंद है quokka", "दिन भर है wombat", "ดื่ม น้ำ เย็น dingo", "น้อย กล้ำ numbat"],
      "numbat",
    );
    expect((await search(key, "हिंदी")).data.map((h) => h.id)).toEqual([hindi]);
    expect((await search(key, "न्हिंदी")).data.map((h) => h.id)).toEqual([]);
    expect((await search(key, "น้ำ")).data.map((h) => h.id)).toEqual([thai]);
  });
});
