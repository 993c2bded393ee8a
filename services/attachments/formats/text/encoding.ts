// Which encoding a text file is in. Most text is UTF-8; Windows still writes UTF-16 ("Unicode"
// text, Excel's Unicode CSV, PowerShell's logs) and older tools Windows-1252. A file in either is
// read through a UTF-8 copy of it (services/attachments/text-view.ts) rather than as UTF-8 bytes,
// which would show NULs between the letters, or U+FFFD for each accented one.

export type TextEncoding = "utf-8" | "utf-16le" | "utf-16be" | "windows-1252";

/** UTF-16 from a file's first bytes: its byte-order mark, or ASCII-heavy text with every other byte zero. */
export function utf16Of(head: Uint8Array): "utf-16le" | "utf-16be" | null {
  // FF FE 00 00 is UTF-32's mark, not UTF-16's.
  if (head[0] === 0xff && head[1] === 0xfe) return head[2] === 0 && head[3] === 0 ? null : "utf-16le";
  if (head[0] === 0xfe && head[1] === 0xff) return "utf-16be";
  const pairs = Math.floor(Math.min(head.length, 8192) / 2);
  if (pairs < 2) return null;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i < pairs; i++) {
    if (head[2 * i] === 0) evenZero++;
    if (head[2 * i + 1] === 0) oddZero++;
  }
  if (oddZero >= pairs * 0.6 && evenZero <= pairs * 0.02) return "utf-16le";
  if (evenZero >= pairs * 0.6 && oddZero <= pairs * 0.02) return "utf-16be";
  return null;
}

/** Whether a stream of bytes is valid UTF-8, fed a chunk at a time (native decoding: cheap on large files). */
export class Utf8Check {
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  private ok = true;

  push(chunk: Uint8Array): void {
    if (!this.ok) return;
    try {
      this.decoder.decode(chunk, { stream: true });
    } catch {
      this.ok = false;
    }
  }

  valid(): boolean {
    if (this.ok) {
      try {
        this.decoder.decode();
      } catch {
        this.ok = false;
      }
    }
    return this.ok;
  }
}

/**
 * Counts well-formed multi-byte UTF-8 sequences against bytes no UTF-8 sequence explains. UTF-8
 * with a few damaged bytes has many more of the first; Windows-1252 text almost never forms one.
 */
export class Utf8Tally {
  multibyte = 0;
  invalid = 0;
  private carry: Uint8Array = new Uint8Array(0);

  push(chunk: Uint8Array): void {
    let b = chunk;
    if (this.carry.length) {
      b = new Uint8Array(this.carry.length + chunk.length);
      b.set(this.carry);
      b.set(chunk, this.carry.length);
    }
    let i = 0;
    while (i < b.length) {
      const c = b[i];
      if (c < 0x80) {
        i++;
        continue;
      }
      const need = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
      if (need < 0) {
        this.invalid++;
        i++;
        continue;
      }
      // A sequence the chunk cuts waits for the next one.
      if (i + need >= b.length) break;
      let ok = true;
      for (let k = 1; k <= need; k++) if ((b[i + k] & 0xc0) !== 0x80) ok = false;
      if (ok) {
        this.multibyte++;
        i += need + 1;
      } else {
        this.invalid++;
        i++;
      }
    }
    this.carry = b.slice(i);
  }

  /** The file's encoding: UTF-8 (damaged or not) when its well-formed sequences outnumber the rest. */
  finish(): "utf-8" | "windows-1252" {
    if (this.carry.length) this.invalid++;
    this.carry = new Uint8Array(0);
    return this.multibyte > this.invalid ? "utf-8" : "windows-1252";
  }
}
