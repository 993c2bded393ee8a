// A cortex row's `terms` (d1-migrations/cortex-shard/0004_cjk_terms.sql: the index holds the body
// and these) and the query expressions that find them: what `porter unicode61` alone does not find.
// - Scripts written without spaces between words (Han, kana, Hangul; Thai, Lao, Khmer, Myanmar):
//   unicode61 makes a whole run one token (or, in Thai and the others, cuts it at every vowel sign),
//   so a word inside a run is found through the run's bigrams (runTerms).
// - A Latin word or number written against such a run ("昨日Pythonで", "GitHub에", "2024年"):
//   unicode61 makes one token of it and the run, so each such piece is a plain term of its own.
// - Diacritics unicode61 does not fold (Greek tonos, ё, Vietnamese letters with two, Arabic and
//   Hebrew vowel points): a word's folded form (foldWord) is a plain term where it differs, and a
//   query word also looks for its folded form ("ΑΘΗΝΑ" finds "Αθήνα", "елки" "ёлки", "viet" "Việt").
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
/** Marks a word is still the same word without (foldWord): diacritics, Greek and Cyrillic ones, Arabic, Hebrew and Syriac vowel points. */
const OPTIONAL_MARK =
  /[\p{Script=Inherited}\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}]/u;

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
 * A word as it is looked up without its optional marks (OPTIONAL_MARK): lower case, decomposed,
 * those marks dropped, composed again, final sigma as σ (as unicode61 folds it). "Αθήνα" is αθηνα,
 * "ёлки" елки, "Việt" viet, "مُحَمَّد" محمد; a Devanagari vowel sign stays.
 */
export function foldWord(word: string): string {
  return word
    .toLowerCase()
    .normalize("NFD")
    .replace(/\p{M}/gu, (m) => (OPTIONAL_MARK.test(m) ? "" : m))
    .normalize("NFC")
    .replace(/ς/g, "σ");
}

/** The runs (RUN) of `text`, each as its characters, marks sealed: the units a bigram is of. */
const runUnits = (run: string): string[] => (run.match(UNITS) ?? []).map(seal);

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

/**
 * A row's `terms`, space separated, in the text's order; null if it needs none. For each run
 * (RUN) its overlapping bigrams and its last unit alone, each marked with TERM_MARK (a run of one
 * unit is that unit). The last unit makes a one-unit query word exact as a prefix (runPhrase: 猫*
 * finds every bigram starting with 猫, and the run-final 猫 of "我的猫" alone), and it ends each
 * run: a phrase of bigrams never runs on from one run into the next ("上海 and 海关" holds 上海 海
 * 海关 关, never 上海 海关). For each other piece of a word, its term if it needs one (pieceTerm).
 * Bounded by the text: a run's terms are about twice its length (three times with marks sealed
 * outside the BMP's private-use area), a piece's term at most twice the piece's; a row is one chunk
 * of at most INDEX_CHUNK_CHARS (search-index.ts), so its terms stay well under D1's row size limit.
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
    const mixed = word.search(RUN) >= 0;
    let at = 0;
    const piece = (end: number) => {
      const term = end > at ? pieceTermOf(word.slice(at, end), mixed) : null;
      if (term !== null) terms.push(term);
    };
    for (const run of word.matchAll(RUN)) {
      piece(run.index);
      terms.push(...runTerms(runUnits(run[0])));
      at = run.index + run[0].length;
    }
    piece(word.length);
    from = Math.max(start + word.length, hit.index + hit[0].length);
  }
  return terms.length ? terms.join(" ") : null;
}

const quoted = (word: string) => `"${word.replace(/"/g, '""')}"`;

/**
 * A query word's runs as the FTS5 phrase over rows' terms (rowTerms) that finds them inside longer
 * runs; null if the word has none. A word of one run is its bigrams, found anywhere in a run; a
 * word of several (`東京-タワー`) must be consecutive runs of the row, the first ending one (its
 * bigrams then its last unit) and the last starting one (what lies between runs is not checked). A
 * last run of one unit (`猫`) is a prefix term: every bigram starting with it, or it alone as a
 * run's last unit. `word` is in NFC, as rows are indexed.
 */
export function runPhrase(word: string): string | null {
  const runs = (word.match(RUN) ?? []).map(runUnits);
  const last = runs.pop();
  if (last === undefined) return null;
  const terms = [...runs.flatMap(runTerms), ...bigramsOf(last)];
  return last.length === 1 ? `${quoted([...terms, TERM_MARK + last[0]].join(" "))}*` : quoted(terms.join(" "));
}

/**
 * How a query word (NFC) is looked up beyond its spellings as written: `cut` when a mark cuts it
 * (CUTTING_MARK), whose spellings then are not looked for (they are the pieces the marks cut it
 * into, which other words hold: "दाल" is "द ल", as "दिल" is); and, for a word without a run (those
 * are runPhrase's), `folded`, the expression for its folded form (foldWord), null where that is
 * what the spellings already look for. Each part of the folded form (a word of `run-42` is two) is
 * a term as rowTerms writes it, sealed where a mark still cuts it; several parts must all match
 * (`("a" AND "b")`).
 */
export function foldedLookup(word: string): { cut: boolean; folded: string | null } {
  const cut = CUTTING_MARK.test(word);
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
