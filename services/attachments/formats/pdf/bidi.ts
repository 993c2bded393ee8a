/**
 * Right-to-left text back into reading order. A PDF shows glyphs left to right as they sit on the
 * page, so Hebrew and Arabic come out of the content stream reversed (visual order). Per line,
 * like pdf.js's bidi pass: a line mostly right-to-left is reversed as a whole and its left-to-right
 * runs (Latin words, numbers) turned back; otherwise only its right-to-left runs are reversed.
 * Brackets in reversed text are mirrored. A simplification of the Unicode bidi algorithm that keeps
 * every word's letters in order, which is what search and reading need.
 */

const RTL = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/;
const LTR = /[\p{L}\p{N}]/u;
const MIRROR: Record<string, string> = {
  "(": ")",
  ")": "(",
  "[": "]",
  "]": "[",
  "{": "}",
  "}": "{",
  "<": ">",
  ">": "<",
  "«": "»",
  "»": "«",
};

type Dir = "R" | "L" | "N";
const dirOf = (c: string): Dir => (RTL.test(c) ? "R" : LTR.test(c) ? "L" : "N");

/** Reverses, mirroring brackets, each maximal run of `strong` characters (with neutrals inside it). */
function reverseRuns(chars: string[], strong: Dir): string[] {
  const out = [...chars];
  const dirs = chars.map(dirOf);
  for (let i = 0; i < chars.length; ) {
    if (dirs[i] !== strong) {
      i++;
      continue;
    }
    let end = i;
    for (let j = i; j < chars.length && dirs[j] !== (strong === "R" ? "L" : "R"); j++) if (dirs[j] === strong) end = j;
    const run = chars.slice(i, end + 1).reverse();
    for (let k = 0; k < run.length; k++) out[i + k] = MIRROR[run[k]] ?? run[k];
    i = end + 1;
  }
  return out;
}

export function visualToLogical(line: string): string {
  if (!RTL.test(line)) return line;
  const chars = Array.from(line);
  let r = 0;
  let l = 0;
  for (const c of chars) {
    const d = dirOf(c);
    if (d === "R") r++;
    else if (d === "L") l++;
  }
  if (r < l) return reverseRuns(chars, "R").join("");
  // Mostly right-to-left: the whole line reads from the right; Latin and numbers read left to right.
  const reversed = chars.reverse().map((c) => MIRROR[c] ?? c);
  return reverseRuns(reversed, "L").join("");
}
