// Cutting text by UTF-16 index without splitting a surrogate pair. Half a pair is a lone
// surrogate, which the Messages API refuses ("no low surrogate in string") on the request that
// carries it and on every later one that replays it; a cut moves back by one instead.

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** `at` as a cut point of `text`: moved back by one when it falls inside a surrogate pair. */
export function wholeAt(text: string, at: number): number {
  return at > 0 && at < text.length && isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at)) ? at - 1 : at;
}

/** text.slice(start, end), both ends moved back off the inside of a surrogate pair. */
export function sliceWhole(text: string, start: number, end = text.length): string {
  return text.slice(wholeAt(text, Math.max(0, start)), wholeAt(text, Math.min(end, text.length)));
}

/** The last `n` chars of `text`, not starting inside a surrogate pair (so at most `n`). */
export function tailWhole(text: string, n: number): string {
  if (n <= 0) return "";
  const from = Math.max(0, text.length - n);
  const at = wholeAt(text, from);
  return text.slice(at === from ? from : from + 1);
}

/**
 * `value` with every string and key that holds a lone surrogate made well-formed (U+FFFD in its
 * place). What needs no change is returned as it is, the same object, so a request that is already
 * well-formed (every request, when each cut above is whole) costs one scan and no copy.
 */
export function wellFormedDeep<T>(value: T): T {
  if (typeof value === "string") return (value.isWellFormed() ? value : value.toWellFormed()) as T;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    value.forEach((v, i) => {
      const w = wellFormedDeep(v);
      if (w !== v) (out ??= [...value])[i] = w;
    });
    return (out ?? value) as T;
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    const fixed = entries.map(([k, v]) => [wellFormedDeep(k), wellFormedDeep(v)] as const);
    return fixed.some(([k, v], i) => k !== entries[i][0] || v !== entries[i][1])
      ? (Object.fromEntries(fixed) as T)
      : value;
  }
  return value;
}
