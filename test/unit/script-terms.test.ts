// A row's `terms` (services/cortex/script-terms.ts rowTerms): English text is indexed exactly as
// before the scripts' terms (the recall benchmarks and the shard's bytes per message depend on it),
// CJK text's terms are as the first version wrote them, and a row's terms stay bounded by its text.
import { describe, expect, it } from "vitest";
import { closeAfterMarks, foldWord, rowTerms, runPhrase, unmarkOtherWords } from "../../services/cortex/script-terms";
import { cutMarkedSnippet, INDEX_CHUNK_CHARS, MATCH_CLOSE, MATCH_OPEN } from "../../services/cortex/search-index";

/** cjkTerms as it was before the scripts' terms, verbatim: the reference for text it must not change. */
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]+/gu;
const TERM_MARK = "\uE002";
const cjkRuns = (text: string): string[][] => [...text.matchAll(CJK_RUN)].map(([run]) => [...run]);
const bigramsOf = (chars: readonly string[]): string[] => chars.slice(1).map((c, i) => TERM_MARK + chars[i] + c);
const runTerms = (chars: readonly string[]): string[] => [...bigramsOf(chars), TERM_MARK + chars[chars.length - 1]];
function firstVersion(text: string): string | null {
  const terms = cjkRuns(text).flatMap(runTerms);
  return terms.length ? terms.join(" ") : null;
}

describe("rowTerms", () => {
  it("adds nothing to ASCII text, as before", () => {
    const texts = [
      "What did I say about the quarterly report on 2024-03-05? run-42.log failed with ENOENT.",
      "I'm flying to Tokyo next week; my flight is JL 005 at 11:30 (gate C-12). email: a.b@example.com",
      "def f(x):\n    return x ** 2  # squares, naïvely\t\u0000 ~`!@#$%^&*()_+={}[]|\\:;\"'<>,.?/",
      "",
      "Noted.",
    ];
    for (const t of texts) expect(rowTerms(t), t).toBe(firstVersion(t));
    for (const t of texts) expect(rowTerms(t)).toBeNull();
  });

  it("gives CJK text the terms it had, plus a Latin word or number written against a run", () => {
    for (const t of [
      "私は東京タワーに行きました",
      "上海、海关 and 海",
      "我的猫",
      "어제 서울에서 친구를 만났어요",
      "我在 2024 年",
    ])
      expect(rowTerms(t), t).toBe(firstVersion(t));
    expect(rowTerms("我在2024年")).toBe(`${firstVersion("我在")} 2024 ${firstVersion("年")}`);
    expect(rowTerms("GitHub에")).toBe(`GitHub ${TERM_MARK}에`);
  });

  it("gives a Thai run its bigrams with their marks, a folded form where unicode61 keeps the diacritic, a Devanagari word whole", () => {
    const thai = rowTerms("ไปกรุงเทพ")?.split(" ") ?? [];
    // ไป ปก กรุ รุง งเ เท ทพ, then พ: seven bigrams of eight units (a letter with its marks), then the last.
    expect(thai).toHaveLength(8);
    expect(thai.every((t) => t.startsWith(TERM_MARK) && !/\p{M}/u.test(t))).toBe(true);
    expect(rowTerms("Ο Οδυσσέας στην Αθήνα")).toBe("οδυσσεασ αθηνα");
    expect(rowTerms("у ёлки, Café Müller")).toBe("елки");
    expect(rowTerms("اسمه مُحَمَّد")).toBe("محمد");
    const hindi = rowTerms("मैं कल दिल्ली गया था")?.split(" ") ?? [];
    expect(hindi).toHaveLength(4); // मैं दिल्ली गया था; कल has no vowel sign
    expect(hindi.every((t) => t.startsWith(TERM_MARK) && !/\p{M}/u.test(t))).toBe(true);
    expect(foldWord("ΟΔΥΣΣΕΑΣ")).toBe("οδυσσεασ");
    expect(foldWord("दिल्ली")).toBe("दिल्ली");
  });

  it("passes over emoji and other astral characters between words", () => {
    expect(rowTerms("🎉 party 🏖️ at Αθήνα 𝕏𝕏 𠮷野家")).toBe(`αθηνα ${TERM_MARK}𠮷野 ${TERM_MARK}野家 ${TERM_MARK}家`);
  });

  it("keeps a row's terms within a few times its text, whatever the script", () => {
    const long = (unit: string) => unit.repeat(Math.ceil(INDEX_CHUNK_CHARS / unit.length)).slice(0, INDEX_CHUNK_CHARS);
    for (const unit of ["กรุ่งเทพ", "东京タワー", "हिंदी ", "Αθήνα ", "ก\u1dc0\u1dc1", "昨日Python2"]) {
      const text = long(unit);
      expect((rowTerms(text) ?? "").length, unit).toBeLessThanOrEqual(6 * text.length);
    }
  });
});

describe("a snippet's match over combining marks", () => {
  it("closes a match after the marks that follow it, its offsets exact", () => {
    const marked = `मैं कल ${MATCH_OPEN}दिल्ल${MATCH_CLOSE}ी गया, ${MATCH_OPEN}ท${MATCH_CLOSE}ี่นี่`;
    const { snippet, matches } = cutMarkedSnippet(marked);
    expect(snippet).toBe("मैं कल [दिल्ली] गया, [ที่]นี่");
    expect(matches.map(([a, b]) => snippet.slice(a, b))).toEqual(["[दिल्ली]", "[ที่]"]);
    expect(closeAfterMarks(`a${MATCH_CLOSE}b`, MATCH_CLOSE)).toBe(`a${MATCH_CLOSE}b`);
  });
});

describe("foldWord", () => {
  it("folds only the diacritics the docs list: Cyrillic й, ї, ў stay, ё and Greek tonos and dialytika go", () => {
    expect(["война", "мой", "МОЙ", "їжак", "ўсё", "ёлки", "Ϊάσων", "Việt", "مُحَمَّد", "שָׁלוֹם"].map(foldWord)).toEqual([
      "война",
      "мой",
      "мой",
      "їжак",
      "ўсе",
      "елки",
      "ιασων",
      "viet",
      "محمد",
      "שלום",
    ]);
    // Greek keeps its other marks (perispomeni), Latin its marks beyond U+036F.
    expect(foldWord("ᾶ")).toBe("ᾶ");
    expect(foldWord("e\u1dc4")).toBe("e\u1dc4");
    expect(rowTerms("это мой дом, Началась война")).toBeNull();
  });
});

describe("runPhrase", () => {
  it("holds a word's Latin or number pieces beside its runs, in order", () => {
    expect(runPhrase("2024年")).toBe(`"2024 ${TERM_MARK}年"*`);
    expect(runPhrase("Pythonで")).toBe(`"Python ${TERM_MARK}で"*`);
    expect(runPhrase("GitHub에")).toBe(`"GitHub ${TERM_MARK}에"*`);
    expect(runPhrase("年2024")).toBe(`"${TERM_MARK}年 2024"`);
    // As rowTerms writes them: the query's phrase is inside the row's terms.
    expect(rowTerms("我在2024年去了北京")).toContain(`2024 ${TERM_MARK}年去`);
    expect(runPhrase("東京-タワー")).toBe(`"${TERM_MARK}東京 ${TERM_MARK}京 ${TERM_MARK}タワ ${TERM_MARK}ワー"`);
    expect(runPhrase("Python")).toBeNull();
  });

  it("finds a one-unit Thai or Myanmar word as that unit only: no term of the letter with other marks starts with it", () => {
    const terms = (text: string) => (rowTerms(text) ?? "").split(" ");
    const prefix = (word: string) => (runPhrase(word) ?? "").replace(/^"|"\*$/g, "");
    for (const [word, other] of [
      ["ก", "ฉันกินข้าว"],
      ["က", "ကိုကို"],
      ["กิ", "กิ่ง"],
    ])
      expect(
        terms(other).filter((t) => t.startsWith(prefix(word))),
        word,
      ).toEqual([]);
    expect(terms("ก ขา")).toContain(prefix("ก"));
    expect(terms("ไปกินข้าว").filter((t) => t.startsWith(prefix("กิ")))).toHaveLength(1);
  });
});

describe("a snippet's matches of a word's pieces", () => {
  it("keeps a cut word's mark over that word only, and every other word's", () => {
    const mark = (w: string) => `${MATCH_OPEN}${w}${MATCH_CLOSE}`;
    const marked = `आज ${mark("दाल")} बनी और मेरा ${mark("दिल")} खुश, खु${mark("द ल")}ाया ${mark("दाल")}ें`;
    const opts = { open: MATCH_OPEN, close: MATCH_CLOSE };
    expect(unmarkOtherWords(marked, { ...opts, words: ["दाल"] })).toBe(
      `आज ${mark("दाल")} बनी और मेरा दिल खुश, खुद लाया दालें`,
    );
    expect(unmarkOtherWords(marked, { ...opts, words: ["दिल"] })).toBe(
      `आज दाल बनी और मेरा ${mark("दिल")} खुश, खुद लाया दालें`,
    );
    const ascii = `the ${mark("report")} and ${mark("reports")}`;
    expect(unmarkOtherWords(ascii, { ...opts, words: ["report", "दाल"] })).toBe(ascii);
    const thai = `${mark("กรุงเทพ")}ฯ ${mark("กริงเทพ")}`;
    expect(unmarkOtherWords(thai, { ...opts, words: ["กรุงเทพ"] })).toBe(`${mark("กรุงเทพ")}ฯ กริงเทพ`);
  });
});
