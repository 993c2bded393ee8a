// The terms the cortex's FTS5 index holds for one of a query's words, computed in code: what the
// `porter unicode61` tokenizer makes of it (unicode61 splits it at anything but letters and digits,
// folds case and single diacritics; porter stems each piece). The cortex needs them to look a
// query's words up in the background term statistics (services/cortex/term-stats.ts), whose keys
// are the stems SQLite wrote. SQLite does not expose its tokenizer to SQL, so this is a second
// implementation, held to SQLite's output word for word by test/unit/fts-terms.test.ts (every
// suffix rule, the project's docs, 20,000 seeded random words mixing Latin, Greek, Cyrillic,
// Georgian, Cherokee, kana, Arabic, Hangul and CJK; and, while it was written, 134,466 distinct
// words of a chat corpus: no difference; and test/workers/search-combining-marks.test.ts holds it
// to D1's on words in NFC and NFD and with every mark of U+0300 to U+036F). It covers what a query
// word can hold (letters, combining marks, digits and the joiners toFtsQuery keeps inside a word);
// it does not copy unicode61's treatment of symbols and emoji, which never reach it.
//
// The stemmer follows SQLite's FTS5 Porter rules exactly, including where they differ from the
// 1980 paper ("logi" -> "log", "bli" -> "ble", each step trying only the first suffix that
// matches). It works on UTF-8 bytes as SQLite does: a token shorter than 3 or longer than 64
// bytes is left alone, and a non-ASCII byte counts as a consonant.

const MAX_TOKEN_BYTES = 64;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Rule = readonly [suffix: string, replacement: string, condition: (w: Word, stemLength: number) => boolean];

/** A token being stemmed: its bytes and how many of them are still in the word. */
interface Word {
  bytes: Uint8Array;
  length: number;
}

const A = 97,
  E = 101,
  I = 105,
  N = 110,
  O = 111,
  U = 117,
  Y = 121,
  L = 108,
  S = 115,
  Z = 122,
  W = 119,
  X = 120,
  T = 116;

function isVowel(c: number, yIsVowel: boolean): boolean {
  return c === A || c === E || c === I || c === O || c === U || (yIsVowel && c === Y);
}

/**
 * Past the first vowel-then-consonant run of bytes[from, to): the index after that consonant, or 0.
 * `from` is 0 or the end of an earlier such run, so the byte before it (if any) is a consonant.
 */
function vowelConsonant(w: Word, from: number, to: number): number {
  let consonant = from > 0;
  let i = from;
  for (; i < to; i++) {
    consonant = !isVowel(w.bytes[i], consonant);
    if (!consonant) break;
  }
  for (i++; i < to; i++) {
    consonant = !isVowel(w.bytes[i], consonant);
    if (consonant) return i + 1;
  }
  return 0;
}

/** Porter's measure m of the stem bytes[0, n), compared: m > 0, m > 1, m = 1. */
const mAbove0 = (w: Word, n: number) => vowelConsonant(w, 0, n) > 0;
function mAbove1(w: Word, n: number): boolean {
  const k = vowelConsonant(w, 0, n);
  return k > 0 && vowelConsonant(w, k, n) > 0;
}
function mIs1(w: Word, n: number): boolean {
  const k = vowelConsonant(w, 0, n);
  return k > 0 && vowelConsonant(w, k, n) === 0;
}

/** *o: the stem ends consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(w: Word, n: number): boolean {
  const last = w.bytes[n - 1];
  if (last === W || last === X || last === Y) return false;
  let mask = 0;
  let consonant = false;
  for (let i = 0; i < n; i++) {
    consonant = !isVowel(w.bytes[i], consonant);
    mask = ((mask << 1) | (consonant ? 1 : 0)) & 7;
  }
  return mask === 5;
}

/** *v*: the stem holds a vowel (y counts after the first byte). */
function hasVowel(w: Word, n: number): boolean {
  for (let i = 0; i < n; i++) if (isVowel(w.bytes[i], i > 0)) return true;
  return false;
}

const mAbove1AndSOrT = (w: Word, n: number) => (w.bytes[n - 1] === S || w.bytes[n - 1] === T) && mAbove1(w, n);

function endsWith(w: Word, suffix: string): boolean {
  if (w.length <= suffix.length) return false;
  for (let i = 0; i < suffix.length; i++)
    if (w.bytes[w.length - suffix.length + i] !== suffix.charCodeAt(i)) return false;
  return true;
}

function replaceEnd(w: Word, cut: number, replacement: string): void {
  const at = w.length - cut;
  for (let i = 0; i < replacement.length; i++) w.bytes[at + i] = replacement.charCodeAt(i);
  w.length = at + replacement.length;
}

/**
 * A step's rules keyed by their suffix's second-to-last letter, as SQLite dispatches them: of the
 * rules under the word's own second-to-last letter, only the first whose suffix ends the word (with
 * a byte left before it) is tried, in the order listed.
 */
function byKey(rules: readonly Rule[]): ReadonlyMap<number, readonly Rule[]> {
  const keyed = new Map<number, Rule[]>();
  for (const rule of rules) {
    const key = rule[0].charCodeAt(rule[0].length - 2);
    keyed.set(key, [...(keyed.get(key) ?? []), rule]);
  }
  return keyed;
}

function step(w: Word, rules: ReadonlyMap<number, readonly Rule[]>): boolean {
  for (const [suffix, replacement, condition] of rules.get(w.bytes[w.length - 2]) ?? []) {
    if (!endsWith(w, suffix)) continue;
    if (!condition(w, w.length - suffix.length)) return false;
    replaceEnd(w, suffix.length, replacement);
    return true;
  }
  return false;
}

const STEP2 = byKey([
  ["ational", "ate", mAbove0],
  ["tional", "tion", mAbove0],
  ["enci", "ence", mAbove0],
  ["anci", "ance", mAbove0],
  ["izer", "ize", mAbove0],
  ["logi", "log", mAbove0],
  ["bli", "ble", mAbove0],
  ["alli", "al", mAbove0],
  ["entli", "ent", mAbove0],
  ["eli", "e", mAbove0],
  ["ousli", "ous", mAbove0],
  ["ization", "ize", mAbove0],
  ["ation", "ate", mAbove0],
  ["ator", "ate", mAbove0],
  ["alism", "al", mAbove0],
  ["iveness", "ive", mAbove0],
  ["fulness", "ful", mAbove0],
  ["ousness", "ous", mAbove0],
  ["aliti", "al", mAbove0],
  ["iviti", "ive", mAbove0],
  ["biliti", "ble", mAbove0],
]);
const STEP3 = byKey([
  ["ical", "ic", mAbove0],
  ["ness", "", mAbove0],
  ["icate", "ic", mAbove0],
  ["iciti", "ic", mAbove0],
  ["ful", "", mAbove0],
  ["ative", "", mAbove0],
  ["alize", "al", mAbove0],
]);
const STEP4 = byKey([
  ["al", "", mAbove1],
  ["ance", "", mAbove1],
  ["ence", "", mAbove1],
  ["er", "", mAbove1],
  ["ic", "", mAbove1],
  ["able", "", mAbove1],
  ["ible", "", mAbove1],
  ["ant", "", mAbove1],
  ["ement", "", mAbove1],
  ["ment", "", mAbove1],
  ["ent", "", mAbove1],
  ["ion", "", mAbove1AndSOrT],
  ["ou", "", mAbove1],
  ["ism", "", mAbove1],
  ["ate", "", mAbove1],
  ["iti", "", mAbove1],
  ["ous", "", mAbove1],
  ["ive", "", mAbove1],
  ["ize", "", mAbove1],
]);
const STEP1B_TIDY = byKey([
  ["at", "ate", () => true],
  ["bl", "ble", () => true],
  ["iz", "ize", () => true],
]);

/** One token (already lower-cased and folded) as SQLite's porter tokenizer writes it. */
export function porterStem(token: string): string {
  const source = encoder.encode(token);
  if (source.length < 3 || source.length > MAX_TOKEN_BYTES) return token;
  // Room to spare: no rule grows a word past its length, but a write past a typed array's end would vanish.
  const w: Word = { bytes: new Uint8Array(source.length + 8), length: source.length };
  w.bytes.set(source);
  const b = w.bytes;

  // Step 1a: plurals.
  if (b[w.length - 1] === S) {
    if (b[w.length - 2] === E) {
      const sses = w.length > 4 && b[w.length - 4] === S && b[w.length - 3] === S;
      const ies = w.length > 3 && b[w.length - 3] === I;
      w.length -= sses || ies ? 2 : 1;
    } else if (b[w.length - 2] !== S) w.length -= 1;
  }

  // Step 1b: -eed, -ed, -ing; after the last two, tidy the stem left behind.
  let cut = false;
  if (b[w.length - 2] === E) {
    if (endsWith(w, "eed")) {
      if (mAbove0(w, w.length - 3)) replaceEnd(w, 3, "ee");
    } else if (endsWith(w, "ed") && hasVowel(w, w.length - 2)) {
      w.length -= 2;
      cut = true;
    }
  } else if (b[w.length - 2] === N && endsWith(w, "ing") && hasVowel(w, w.length - 3)) {
    w.length -= 3;
    cut = true;
  }
  if (cut && !step(w, STEP1B_TIDY)) {
    const last = b[w.length - 1];
    if (!isVowel(last, false) && last !== L && last !== S && last !== Z && last === b[w.length - 2]) w.length -= 1;
    else if (mIs1(w, w.length) && endsCvc(w, w.length)) b[w.length++] = E;
  }

  // Step 1c: y -> i after a vowel.
  if (b[w.length - 1] === Y && hasVowel(w, w.length - 1)) b[w.length - 1] = I;

  step(w, STEP2);
  step(w, STEP3);
  step(w, STEP4);

  // Step 5a: a final e.
  if (b[w.length - 1] === E && (mAbove1(w, w.length - 1) || (mIs1(w, w.length - 1) && !endsCvc(w, w.length - 1))))
    w.length -= 1;
  // Step 5b: -ll.
  if (w.length > 1 && b[w.length - 1] === L && b[w.length - 2] === L && mAbove1(w, w.length - 1)) w.length -= 1;

  return decoder.decode(b.subarray(0, w.length));
}

/**
 * The combining marks unicode61 takes for diacritics (sqlite3Fts5UnicodeIsdiacritic: some of
 * U+0300 to U+0331). Inside a token one is part of the token and folded away ("cafe" + U+0301,
 * NFD "café", is the term cafe; NFD "Việt" is viet, where NFC "Việt" keeps its two marks: việt);
 * at a token's start it separates.
 */
const DIACRITIC = "\u0300-\u0304\u0306-\u030c\u030f\u0311\u031b\u0323-\u0328\u032d\u032e\u0330\u0331";
/**
 * unicode61's tokens of a query word: a letter or digit, then letters, digits and diacritics. It
 * splits at anything else: "e-mail" is e, mail; a vowel sign (Mc) or another script's mark (Mn:
 * Devanagari, Thai) splits the word at it ("हिंदी" is ह, द).
 */
const TOKEN = new RegExp(`[\\p{L}\\p{N}][\\p{L}\\p{N}${DIACRITIC}]*`, "gu");
const DIACRITICS = new RegExp(`[${DIACRITIC}]`, "gu");

// Characters whose case folding differs from their lower case (Unicode CaseFolding.txt), as
// unicode61 folds them; and Cherokee, whose lower-case letters SQLite's tables predate.
const FOLDS: Readonly<Record<string, string>> = {
  ſ: "s",
  µ: "μ",
  ς: "σ",
  ϐ: "β",
  ϑ: "θ",
  ϕ: "φ",
  ϖ: "π",
  ϰ: "κ",
  ϱ: "ρ",
  ϵ: "ε",
  ẛ: "ṡ",
  ι: "ι",
};
const CHEROKEE = /[\u13a0-\u13ff\uab70-\uabbf]/u;

/**
 * unicode61's folding: each character's lower case on its own (no context: a final Σ is σ), and a
 * Latin letter's one diacritic removed (a letter with two keeps both; other scripts keep theirs).
 */
function fold(token: string): string {
  let lower = "";
  for (const ch of token) lower += FOLDS[ch] ?? (CHEROKEE.test(ch) ? ch : ch.toLowerCase());
  // A Latin letter with what follows it of marks (a lower case can add one: İ is i + U+0307), taken
  // apart on its own: other scripts' letters are left as written, as unicode61 leaves them (NFC
  // would compose decomposed Hangul, and split a composition exclusion such as U+0958).
  return lower.replace(/\p{Script=Latin}\p{Mn}*/gu, (all) => {
    const parts = /^(\p{Script=Latin})(\p{Mn}*)$/u.exec(all.normalize("NFD"));
    return parts && parts[2].length === 1 ? parts[1] : all;
  });
}

/** The FTS5 terms `porter unicode61` makes of one query word, in order. */
export function ftsTerms(word: string): string[] {
  return (word.match(TOKEN) ?? []).map((token) => porterStem(fold(token.replace(DIACRITICS, ""))));
}
