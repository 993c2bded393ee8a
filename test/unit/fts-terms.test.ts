// core/fts-terms.ts is a second implementation of SQLite's `porter unicode61` tokenizer for a
// query's words; the background term counts are keyed by SQLite's stems, so a word stemmed
// differently would silently count as unseen. Held to SQLite (node:sqlite's FTS5) word for word:
// every suffix rule crossed with stems of each shape, the words of the project's own docs, and
// folded letters.
import { readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { ftsTerms, porterStem } from "../../core/fts-terms";

/** SQLite's terms for each text, one row per text. */
function sqliteTerms(texts: readonly string[]): string[][] {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter unicode61');
           CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
  const insert = db.prepare(`INSERT INTO t (rowid, body) VALUES (?, ?)`);
  texts.forEach((text, i) => insert.run(i + 1, text));
  const out: string[][] = texts.map(() => []);
  for (const r of db.prepare(`SELECT doc, term FROM v ORDER BY doc, "offset"`).all() as { doc: number; term: string }[])
    out[r.doc - 1].push(r.term);
  db.close();
  return out;
}

const SUFFIXES = (
  "s es sses ies ss ed eed ing ying ling ting ated bled ized y ational tional enci anci izer logi bli alli entli eli ousli ization ation ator alism iveness " +
  "fulness ousness aliti iviti biliti ical ness icate iciti ful ative alize al ance ence er ic able ible ant ement ment ent sion tion ou ism ate iti ous ive ize e ll l"
).split(" ");
// Stems of each shape Porter's measure and *o tests tell apart: no vowel, m = 0, 1, 2, 3, a y
// after a consonant or a vowel, ending in a double consonant, in c-v-c (and in w, x, y), non-ASCII.
// Folded letters (ï, ç) and letters unicode61 keeps (ß, œ, ð: non-ASCII bytes count as consonants).
const STEMS =
  "a tr ee sky by fly hop hopp fil fail roll agre feed gener generaliz conflat troubl siz hiss bow box play cry rely mess hopeful naïv çaf straß œuvr ðor relat condit".split(
    " ",
  );

describe("fts-terms", () => {
  it("stems every rule and stem shape exactly as SQLite's porter tokenizer does", () => {
    const words = [...new Set(STEMS.flatMap((stem) => ["", ...SUFFIXES].map((suffix) => stem + suffix)))];
    const sqlite = sqliteTerms(words);
    const differ = words
      .filter((w, i) => JSON.stringify(ftsTerms(w)) !== JSON.stringify(sqlite[i]))
      .map((w) => `${w}: ${ftsTerms(w)} (SQLite ${sqlite[words.indexOf(w)]})`);
    expect(words.length).toBeGreaterThan(1500);
    expect(differ).toEqual([]);
  });

  it("agrees with SQLite on every word of the project's own documents", () => {
    const text = ["README.md", "ARCHITECTURE.md"]
      .map((f) => readFileSync(new URL(`../../${f}`, import.meta.url), "utf8"))
      .join("\n");
    const words = [...new Set(text.match(/[\p{L}\p{N}_]+(?:[-.:/@#][\p{L}\p{N}_]+)*/gu) ?? [])];
    const sqlite = sqliteTerms(words);
    expect(words.length).toBeGreaterThan(2000);
    expect(words.filter((w, i) => JSON.stringify(ftsTerms(w)) !== JSON.stringify(sqlite[i]))).toEqual([]);
  });

  it("splits a joined word and folds case and single diacritics as unicode61 does", () => {
    const words = [
      "e-mail",
      "run-42.log",
      "conv_01ABC",
      "Café",
      "NAÏVE",
      "Zürich",
      "São",
      "résumés",
      "ǘber",
      "İstanbul",
      "straße",
      "x@y.com",
      "318.40",
    ];
    // Other scripts: per-character lower case (a final Σ too), case folding's specials, diacritics kept.
    words.push(
      "ΣΑΣ",
      "σας",
      "Σίσυφος",
      "йод",
      "Ёж",
      "Ѐ",
      "ぎんこう",
      "µm",
      "ſtraſſe",
      "ϰαι",
      "ᏰᏐ",
      "ႠჀ",
      "Ḁbc",
      "Việt",
    );
    const sqlite = sqliteTerms(words);
    for (const [i, w] of words.entries()) expect(ftsTerms(w)).toEqual(sqlite[i]);
    expect(ftsTerms("e-mail")).toEqual(["e", "mail"]);
    // Under 3 bytes or over 64 a token is left as it is.
    expect(porterStem("is")).toBe("is");
    expect(porterStem(`${"ab".repeat(31)}ing`)).toBe(`${"ab".repeat(31)}ing`);
    expect(porterStem(`${"ab".repeat(30)}ing`)).toBe("ab".repeat(30));
  });

  it("agrees with SQLite on 20,000 seeded random words mixing scripts", () => {
    // Latin (with its extensions and digits), Greek, Cyrillic, Georgian, Cherokee, kana, Arabic, Hangul, CJK, and µ, ſ.
    const ranges = [
      [0x41, 0x5a],
      [0x61, 0x7a],
      [0x30, 0x39],
      [0xc0, 0x24f],
      [0x1e00, 0x1eff],
      [0x370, 0x3ff],
      [0x400, 0x4ff],
      [0x10a0, 0x10ff],
      [0x13a0, 0x13f5],
      [0x3040, 0x30ff],
      [0x600, 0x6ff],
      [0xac00, 0xac40],
      [0x4e00, 0x4e40],
      [0xb5, 0xb5],
      [0x17f, 0x17f],
    ];
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    const words: string[] = [];
    while (words.length < 20_000) {
      const [a, b] = ranges[next(ranges.length)];
      let w = "";
      for (let k = 2 + next(9); k > 0; k--) {
        const [c, d] = next(3) ? [a, b] : ranges[next(ranges.length)];
        w += String.fromCodePoint(c + next(d - c + 1));
      }
      if (/^[\p{L}\p{N}]+$/u.test(w)) words.push(w);
    }
    const sqlite = sqliteTerms(words);
    expect(words.filter((w, i) => JSON.stringify(ftsTerms(w)) !== JSON.stringify(sqlite[i])).slice(0, 10)).toEqual([]);
  });
});
