// Byte helpers of the PDF reader: the latin1 text of a byte range, and finding an ASCII word in
// bytes (joining chunks is ../shared/bytes).
export function latin1(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let s = "";
  for (let i = start; i < end; i += 0x2000) s += String.fromCharCode(...bytes.subarray(i, Math.min(end, i + 0x2000)));
  return s;
}

export function indexOf(
  hay: Uint8Array,
  needle: string,
  { from = 0, to = hay.length }: { from?: number; to?: number } = {},
): number {
  const n0 = needle.charCodeAt(0);
  const last = to - needle.length;
  outer: for (let i = Math.max(0, from); i <= last; i++) {
    if (hay[i] !== n0) continue;
    for (let k = 1; k < needle.length; k++) if (hay[i + k] !== needle.charCodeAt(k)) continue outer;
    return i;
  }
  return -1;
}

export function lastIndexOf(hay: Uint8Array, needle: string): number {
  const n0 = needle.charCodeAt(0);
  outer: for (let i = hay.length - needle.length; i >= 0; i--) {
    if (hay[i] !== n0) continue;
    for (let k = 1; k < needle.length; k++) if (hay[i + k] !== needle.charCodeAt(k)) continue outer;
    return i;
  }
  return -1;
}
