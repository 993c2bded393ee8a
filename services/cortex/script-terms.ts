// A cortex row's `terms` (d1-migrations/cortex-shard/0004_cjk_terms.sql: the index holds the body
// and these) and the query expressions that find them: what `porter unicode61` alone does not find.
// - Scripts written without spaces between words (Han, kana, Hangul; Thai, Lao, Khmer, Myanmar):
//   unicode61 makes a whole run one token (or, in Thai and the others, cuts it at every vowel sign),
//   so a word inside a run is found through the run's bigrams (runTerms).
// - A Latin word or number written against such a run ("昨日Pythonで", "GitHub에", "2024年"):
//   unicode61 makes one token of it and the run, so each such piece is a plain term of its own, and
//   a query word holding one looks for it beside the run's terms ("2024年" is not any "年").
// - Diacritics unicode61 does not fold (Greek tonos and dialytika, ё, Vietnamese letters with two,
//   Arabic and Hebrew vowel points): a word's folded form (foldWord) is a plain term where it
//   differs, and a query word also looks for its folded form ("ΑΘΗΝΑ" finds "Αθήνα", "елки" "ёлки",
//   "viet" "Việt"). Only those: "й", "ї", "ў" are letters of their own ("мой" is not "мои").
// - Combining marks unicode61 takes for separators (Devanagari's and other Brahmic scripts' vowel
//   signs): a word with such a mark is a marked term of its own, its marks sealed into private-use
//   characters (seal), and a query word with one looks for that term, never for the pieces the
//   marks cut it into ("दाल" is not "द ल", which "दिल" and "दिल्ली" also hold).
// An ASCII word written apart from such runs adds nothing: English text is indexed as it always was.
import { ftsTerms } from "../../core/fts-terms";

/**
 * What each of a row's marked terms starts with: a private-use character, a token character to unicode61
 * (it keeps Co) that no query word holds (queryWords takes letters, marks, numbers and `_`) nor any text
 * is expected to. A marked term is never a token of the body, so a phrase over the terms never matches the
 * body's own tokens (the two-character runs of "上海、海关" are tokens 上海 海关, side by side), nor
 * reaches from the body's last token into the terms.
 */
export const TERM_MARK = "\uE002";

const CJK = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー`;
const SPACELESS = String.raw`\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}`;
/** A letter or digit of a script written without spaces whose words unicode61 cuts at their vowel signs. */
const SPACELESS_LETTER = new RegExp(String.raw`(?=[\p{L}\p{N}])[${SPACELESS}]`, "u");
/**
 * One character of a run: a Chinese or Japanese character (Han, Hiragana, Katakana and the
 * prolonged sound mark) or a Hangul one, or a Thai, Lao, Khmer or Myanmar letter or digit with the
 * combining marks that follow it (its vowel signs, tone marks, virama).
 */
const UNIT = String.raw`[${CJK}]|(?=[\p{L}\p{N}])[${SPACELESS}]\p{M}*`;
const RUN = new RegExp(`(?:${UNIT})+`, "gu");
const UNITS = new RegExp(UNIT, "gu");
/**
 * A word of a text: a letter, digit or run character, then those and marks (as queryWords takes
 * them, less joiners).
 */
const WORD = new RegExp(String.raw`[\p{L}\p{N}${CJK}][\p{L}\p{M}\p{N}${CJK}]*`, "gu");
const WORD_AT = new RegExp(WORD.source, "uy");
const ASCII = /^\p{ASCII}*$/u;
const NON_ASCII = /\P{ASCII}/gu;
const ASCII_ALNUM = /[A-Za-z0-9]/;
/**
 * A combining mark unicode61 cuts a word at: any but U+0300 to U+036F, which it takes for
 * diacritics (core/fts-terms.ts) and folds away or keeps in the word.
 */
const CUTTING_MARK = /(?![\u0300-\u036f])\p{M}/u;
const MARK = /\p{M}/u;
const LATIN = /\p{Script=Latin}/u;
const GREEK = /\p{Script=Greek}/u;
const POINTED = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}]/u;
/** A vowel point or other mark of Arabic, Hebrew and Syriac (theirs, or one they share: Inherited). */
const POINT = /[\p{Script=Inherited}\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}]/u;

/**
 * Whether a word is still the same word without `mark` on `base` (the letter it follows, lower
 * case, decomposed): a Latin letter's diacritics (U+0300 to U+036F, Vietnamese's too), Greek's tonos
 * and dialytika, Russian ё's diaeresis, Arabic, Hebrew and Syriac vowel points. No other: Cyrillic
 * й (и and a breve), ї and ў are letters of their own, and an Indic vowel sign is part of its word.
 */
function optionalMark(base: string, mark: string): boolean {
  if (LATIN.test(base)) return mark >= "\u0300" && mark <= "\u036f";
  if (GREEK.test(base)) return mark === "\u0301" || mark === "\u0308";
  if (base === "е") return mark === "\u0308";
  return POINTED.test(base) && POINT.test(mark);
}

/**
 * A combining mark as a private-use character unicode61 keeps in the token (Co), one for each mark:
 * U+0300 to U+1AFF (most scripts' marks) in the BMP's U+E100 to U+F8FF, other marks of the BMP in
 * plane 15, of plane 1 in plane 16; marks beyond (variation selectors of plane 14) are left out.
 */
function sealMark(mark: string): string {
  const cp = mark.codePointAt(0) ?? 0;
  if (cp >= 0x300 && cp < 0x1b00) return String.fromCodePoint(0xe100 + cp - 0x300);
  if (cp < 0x10000) return String.fromCodePoint(0xf0000 + cp);
  if (cp < 0x20000) return String.fromCodePoint(0x100000 + cp - 0x10000);
  return "";
}

/** `text` with each combining mark sealed (sealMark): one token to unicode61 where it was several. */
const seal = (text: string) => text.replace(/\p{M}/gu, sealMark);

/**
 * A word as it is looked up without its optional marks (optionalMark): lower case, decomposed,
 * those marks dropped, composed again, final sigma as σ (as unicode61 folds it). "Αθήνα" is αθηνα,
 * "ёлки" елки, "Việt" viet, "مُحَمَّد" محمد; "мой" stays мой, a Devanagari vowel sign stays.
 */
export function foldWord(word: string): string {
  let base = "";
  const kept = [...word.toLowerCase().normalize("NFD")].filter((c) => {
    if (MARK.test(c)) return !optionalMark(base, c);
    base = c;
    return true;
  });
  return kept.join("").normalize("NFC").replace(/ς/g, "σ");
}

/**
 * A unit as its terms hold it: its marks sealed, and before its letter ("กิ" is the sealed ิ, then
 * ก), so a term holding it starts with a sealed mark or the letter itself. A one-unit query's prefix
 * (runPhrase: "\uE002ก"*) then finds only that unit: a term starting with TERM_MARK, the unit's sealed
 * marks and its letter has that unit first (its first character not a sealed mark is the letter),
 * never the letter with other vowel signs ("กิ", "กี่").
 */
function unitTerm(unit: string): string {
  const letter = String.fromCodePoint(unit.codePointAt(0) ?? 0);
  return seal(unit.slice(letter.length)) + letter;
}

/** The units (UNIT) of a run, as its terms hold them (unitTerm): what a bigram is of. */
const runUnits = (run: string): string[] => (run.match(UNITS) ?? []).map(unitTerm);

/** The overlapping bigrams of a run's units, each marked. */
const bigramsOf = (units: readonly string[]): string[] => units.slice(1).map((c, i) => TERM_MARK + units[i] + c);

/** A run's terms: its bigrams, then its last unit alone, each marked. */
const runTerms = (units: readonly string[]): string[] => [...bigramsOf(units), TERM_MARK + units[units.length - 1]];

/** unicode61's terms of `a` and `b` are the same (core/fts-terms.ts). */
const sameTerms = (a: string, b: string) => ftsTerms(a).join(" ") === ftsTerms(b).join(" ");

/**
 * The term of a word's piece outside runs, if it needs one: its folded form sealed and marked where
 * a mark still cuts it, else its folded form, plain, where unicode61 makes other terms of the piece
 * or the piece was written against a run (`mixed`: unicode61 made one token of both). An ASCII piece
 * needs one only when mixed.
 */
function pieceTerm(piece: string, mixed: boolean): string | null {
  if (ASCII.test(piece)) return mixed ? piece : null;
  const folded = foldWord(piece);
  if (!folded) return null;
  if (CUTTING_MARK.test(folded)) return TERM_MARK + seal(folded);
  return mixed || !sameTerms(folded, piece) ? folded : null;
}

/** A piece of a word: a run's units (runUnits), or a piece outside runs and whether it was written against one. */
type Segment = { units: string[] } | { piece: string; mixed: boolean };

/** A word's (WORD) runs and the pieces between them, in order. */
function* segments(word: string): Generator<Segment> {
  const mixed = word.search(RUN) >= 0;
  let at = 0;
  for (const run of word.matchAll(RUN)) {
    if (run.index > at) yield { piece: word.slice(at, run.index), mixed };
    yield { units: runUnits(run[0]) };
    at = run.index + run[0].length;
  }
  if (word.length > at) yield { piece: word.slice(at), mixed };
}

/**
 * A row's `terms`, space separated, in the text's order; null if it needs none. For each run
 * (RUN) its overlapping bigrams and its last unit alone, each marked with TERM_MARK (a run of one
 * unit is that unit). The last unit makes a one-unit query word exact as a prefix (runPhrase: 猫*
 * finds every bigram starting with 猫, and the run-final 猫 of "我的猫" alone), and it ends each
 * run: a phrase of bigrams never runs on from one run into the next ("上海 and 海关" holds 上海 海
 * 海关 关, never 上海 海关). For each other piece of a word, its term if it needs one (pieceTerm).
 * Bounded by the text: a run's terms are 3.5 to 4 times its length (a bigram, TERM_MARK, two
 * units and a space, for each unit: CJK text measures 4 in characters, 3.3 in UTF-8 bytes; Thai
 * 3.5 and 3; more with marks sealed outside the BMP's private-use area), a piece's term at most
 * twice the piece's; a row is one chunk of at most INDEX_CHUNK_CHARS (search-index.ts), so its
 * terms stay well under D1's row size limit (test/unit/script-terms.test.ts holds every script to 6
 * times).
 */
export function rowTerms(text: string): string | null {
  const terms: string[] = [];
  const pieces = new Map<string, string | null>();
  const pieceTermOf = (piece: string, mixed: boolean) => {
    const key = `${mixed ? 1 : 0}${piece}`;
    if (!pieces.has(key)) pieces.set(key, pieceTerm(piece, mixed));
    return pieces.get(key) ?? null;
  };
  // Only words with a non-ASCII character can need a term: each is found from its first such
  // character, back over the ASCII letters and digits before it (one pass over an English text).
  for (let from = 0; ; ) {
    NON_ASCII.lastIndex = from;
    const hit = NON_ASCII.exec(text);
    if (hit === null) break;
    let start = hit.index;
    while (start > from && ASCII_ALNUM.test(text[start - 1])) start--;
    WORD_AT.lastIndex = start;
    const word = WORD_AT.exec(text)?.[0] ?? "";
    for (const segment of segments(word)) {
      if ("units" in segment) terms.push(...runTerms(segment.units));
      else {
        const term = pieceTermOf(segment.piece, segment.mixed);
        if (term !== null) terms.push(term);
      }
    }
    from = Math.max(start + word.length, hit.index + hit[0].length);
  }
  return terms.length ? terms.join(" ") : null;
}

const quoted = (word: string) => `"${word.replace(/"/g, '""')}"`;

/**
 * A query word's runs as the FTS5 phrase over rows' terms (rowTerms) that finds them inside longer
 * runs; null if the word has none. The phrase is the terms rowTerms writes for the word (WORD), in
 * order, its pieces' terms among them (`2024年` is 2024 then 年, never 年 alone), except its last
 * run, which is its bigrams, found anywhere in a run: a word of one run is found inside longer
 * runs; of several (`東京-タワー`) they must be consecutive runs of the row, the first ending one
 * (its bigrams then its last unit) and the last starting one (what lies between runs is not
 * checked). A last run of one unit (`猫`, `ก`) is a prefix term: every bigram starting with that
 * unit, or it alone as a run's last unit; exact for a Thai or other unit with vowel signs too, as
 * its terms hold it (unitTerm: `ก` is not `กิ`). `word` is in NFC, as rows are indexed.
 */
export function runPhrase(word: string): string | null {
  const parts = (word.match(WORD) ?? []).flatMap((w) => [...segments(w)]);
  const last = parts.findLastIndex((part) => "units" in part);
  const run = parts[last];
  if (run === undefined || !("units" in run)) return null;
  const before = parts.slice(0, last).flatMap(segmentTerms);
  const after = parts.slice(last + 1).flatMap(segmentTerms);
  // A piece after the last run: the run ends there, as rowTerms writes it.
  if (after.length) return quoted([...before, ...runTerms(run.units), ...after].join(" "));
  if (run.units.length > 1) return quoted([...before, ...bigramsOf(run.units)].join(" "));
  return `${quoted([...before, TERM_MARK + run.units[0]].join(" "))}*`;
}

/** A segment's terms as rowTerms writes them: a run's (runTerms), a piece's if it needs one (pieceTerm). */
function segmentTerms(segment: Segment): string[] {
  if ("units" in segment) return runTerms(segment.units);
  const term = pieceTerm(segment.piece, segment.mixed);
  return term === null ? [] : [term];
}

/**
 * How a query word (NFC) is looked up beyond its spellings as written: `cut` when a mark cuts it
 * (CUTTING_MARK) or it holds a Thai, Lao, Khmer or Myanmar letter, whose spellings then are not
 * looked for (they are the pieces the marks cut it or the text into, which other words hold: "दाल"
 * is "द ल", as "दिल" is; "က" is a piece of "ကိုကို"); and, for a word without a run (those
 * are runPhrase's), `folded`, the expression for its folded form (foldWord), null where that is
 * what the spellings already look for. Each part of the folded form (a word of `run-42` is two) is
 * a term as rowTerms writes it, sealed where a mark still cuts it; several parts must all match
 * (`("a" AND "b")`).
 */
export function foldedLookup(word: string): { cut: boolean; folded: string | null } {
  const cut = CUTTING_MARK.test(word) || SPACELESS_LETTER.test(word);
  if (word.search(RUN) >= 0) return { cut, folded: null };
  const folded = foldWord(word);
  if (!cut && sameTerms(folded, word)) return { cut, folded: null };
  const parts = (folded.match(WORD) ?? []).map((p) => quoted(CUTTING_MARK.test(p) ? TERM_MARK + seal(p) : p));
  if (!parts.length) return { cut, folded: null };
  return { cut, folded: parts.length === 1 ? parts[0] : `(${parts.join(" AND ")})` };
}

/**
 * Moves each `close` mark of a marked snippet past the combining marks that follow it: unicode61
 * ends a token before a vowel sign, so FTS5 would close "दिल्ली" as `[दिल्ल]ी`.
 */
export const closeAfterMarks = (marked: string, close: string): string =>
  marked.replace(new RegExp(`${close}(\\p{M}+)`, "gu"), `$1${close}`);

/**
 * A marked snippet (`open`, `close` around each match, as FTS5 marks them) less the marks over
 * another word than the query's: a word looked up by its terms (foldedLookup's `cut`) is marked in
 * the text through the pieces unicode61 cuts it into, which other words hold too ("दाल" marks
 * "दिल", both "द ल"). A match of a cut word's pieces (and of no other query word's) stays marked
 * only where it is that word (foldWord): a whole word, or for a word with a run (Thai) anywhere in a
 * run, as the search finds it. The marks a match ends before are the match's (closeAfterMarks).
 */
export function unmarkOtherWords(
  marked: string,
  opts: { open: string; close: string; words: readonly string[] },
): string {
  const { open, close } = opts;
  const words = opts.words.map((w) => w.normalize("NFC"));
  const cut = words.filter((w) => foldedLookup(w).cut);
  if (!cut.length) return marked;
  const key = (w: string) => ftsTerms(w).join(" ");
  const others = new Set(words.filter((w) => !cut.includes(w)).map(key));
  const span = new RegExp(`${open}([^${open}${close}]*)${close}(\\p{M}*)`, "gu");
  const unmarked = new RegExp(`[${open}${close}]`, "gu");
  return marked.replace(span, (whole: string, ...groups: unknown[]) => {
    // The span's text, the marks after its close, and where it starts.
    const [inner, marks, at] = groups as [string, string, number];
    const text = inner + marks;
    const pieces = key(text);
    const from = cut.filter((w) => key(w) === pieces);
    if (!from.length || others.has(pieces)) return whole;
    const before = marked.slice(0, at).replace(unmarked, "");
    const after = marked.slice(at + whole.length).replace(unmarked, "");
    const apart = !/[\p{L}\p{M}\p{N}]$/u.test(before) && !/^[\p{L}\p{M}\p{N}]/u.test(after);
    const folded = foldWord(text);
    return from.some((w) => foldWord(w) === folded && (apart || w.search(RUN) >= 0)) ? whole : text;
  });
}
