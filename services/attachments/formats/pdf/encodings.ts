/**
 * Character tables for simple fonts (ISO 32000-1 Annex D): WinAnsiEncoding, StandardEncoding,
 * MacRomanEncoding, PDFDocEncoding (text strings), and glyph names for /Differences.
 */

/** 256-entry code → text tables ("" for unmapped codes). */
export type Encoding = readonly string[];

function ascii(): string[] {
  const t: string[] = new Array(256).fill("");
  for (let c = 0x20; c < 0x7f; c++) t[c] = String.fromCharCode(c);
  return t;
}

const WIN_80_9F = "€\0‚ƒ„…†‡ˆ‰Š‹Œ\0Ž\0\0‘’“”•–—˜™š›œ\0žŸ";
const MAC_80_FF =
  "ÄÅÇÉÑÖÜáàâäãåçéèêëíìîïñóòôöõúùûü" +
  "†°¢£§•¶ß®©™´¨≠ÆØ∞±≤≥¥µ∂∑∏π∫ªºΩæø" +
  "¿¡¬√ƒ≈∆«»…\u00a0ÀÃÕŒœ–—“”‘’÷◊ÿŸ⁄€‹›ﬁﬂ" +
  "‡·‚„‰ÂÊÁËÈÍÎÏÌÓÔ\uf8ffÒÚÛÙıˆ˜¯˘˙˚¸˝˛ˇ";

export const WIN_ANSI: Encoding = (() => {
  const t = ascii();
  for (let i = 0; i < 32; i++) t[0x80 + i] = WIN_80_9F[i] === "\0" ? "" : WIN_80_9F[i];
  for (let c = 0xa0; c <= 0xff; c++) t[c] = String.fromCharCode(c);
  return t;
})();

export const MAC_ROMAN: Encoding = (() => {
  const t = ascii();
  for (let i = 0; i < 128; i++) t[0x80 + i] = MAC_80_FF[i];
  return t;
})();

// biome-ignore-start lint/complexity/useSimpleNumberKeys: byte codes are written in hex, as in the PDF reference's encoding tables
const STANDARD_HIGH: Record<number, string> = {
  0xa1: "¡",
  0xa2: "¢",
  0xa3: "£",
  0xa4: "⁄",
  0xa5: "¥",
  0xa6: "ƒ",
  0xa7: "§",
  0xa8: "¤",
  0xa9: "'",
  0xaa: "“",
  0xab: "«",
  0xac: "‹",
  0xad: "›",
  0xae: "ﬁ",
  0xaf: "ﬂ",
  0xb1: "–",
  0xb2: "†",
  0xb3: "‡",
  0xb4: "·",
  0xb6: "¶",
  0xb7: "•",
  0xb8: "‚",
  0xb9: "„",
  0xba: "”",
  0xbb: "»",
  0xbc: "…",
  0xbd: "‰",
  0xbf: "¿",
  0xc1: "`",
  0xc2: "´",
  0xc3: "ˆ",
  0xc4: "˜",
  0xc5: "¯",
  0xc6: "˘",
  0xc7: "˙",
  0xc8: "¨",
  0xca: "˚",
  0xcb: "¸",
  0xcd: "˝",
  0xce: "˛",
  0xcf: "ˇ",
  0xd0: "—",
  0xe1: "Æ",
  0xe3: "ª",
  0xe8: "Ł",
  0xe9: "Ø",
  0xea: "Œ",
  0xeb: "º",
  0xf1: "æ",
  0xf5: "ı",
  0xf8: "ł",
  0xf9: "ø",
  0xfa: "œ",
  0xfb: "ß",
};
// biome-ignore-end lint/complexity/useSimpleNumberKeys: byte codes are written in hex

export const STANDARD: Encoding = (() => {
  const t = ascii();
  t[0x27] = "’";
  t[0x60] = "‘";
  for (const [k, v] of Object.entries(STANDARD_HIGH)) t[Number(k)] = v;
  return t;
})();

export function namedEncoding(name: string): Encoding | null {
  switch (name) {
    case "WinAnsiEncoding":
      return WIN_ANSI;
    case "MacRomanEncoding":
      return MAC_ROMAN;
    case "StandardEncoding":
    case "MacExpertEncoding":
      return STANDARD;
    default:
      return null;
  }
}

// Glyph names (a subset of the Adobe Glyph List covering the Latin tables above).
const ASCII_NAMES =
  "space exclam quotedbl numbersign dollar percent ampersand quotesingle parenleft parenright asterisk plus comma hyphen period slash " +
  "zero one two three four five six seven eight nine colon semicolon less equal greater question at " +
  "A B C D E F G H I J K L M N O P Q R S T U V W X Y Z bracketleft backslash bracketright asciicircum underscore grave " +
  "a b c d e f g h i j k l m n o p q r s t u v w x y z braceleft bar braceright asciitilde";
const LATIN1_NAMES =
  "nbspace exclamdown cent sterling currency yen brokenbar section dieresis copyright ordfeminine guillemotleft logicalnot sfthyphen registered macron " +
  "degree plusminus twosuperior threesuperior acute mu paragraph periodcentered cedilla onesuperior ordmasculine guillemotright onequarter onehalf threequarters questiondown " +
  "Agrave Aacute Acircumflex Atilde Adieresis Aring AE Ccedilla Egrave Eacute Ecircumflex Edieresis Igrave Iacute Icircumflex Idieresis " +
  "Eth Ntilde Ograve Oacute Ocircumflex Otilde Odieresis multiply Oslash Ugrave Uacute Ucircumflex Udieresis Yacute Thorn germandbls " +
  "agrave aacute acircumflex atilde adieresis aring ae ccedilla egrave eacute ecircumflex edieresis igrave iacute icircumflex idieresis " +
  "eth ntilde ograve oacute ocircumflex otilde odieresis divide oslash ugrave uacute ucircumflex udieresis yacute thorn ydieresis";
const EXTRA_NAMES: Record<string, string> = {
  Euro: "€",
  quotesinglbase: "‚",
  florin: "ƒ",
  quotedblbase: "„",
  ellipsis: "…",
  dagger: "†",
  daggerdbl: "‡",
  circumflex: "ˆ",
  perthousand: "‰",
  Scaron: "Š",
  guilsinglleft: "‹",
  OE: "Œ",
  Zcaron: "Ž",
  quoteleft: "‘",
  quoteright: "’",
  quotedblleft: "“",
  quotedblright: "”",
  bullet: "•",
  endash: "–",
  emdash: "—",
  tilde: "˜",
  trademark: "™",
  scaron: "š",
  guilsinglright: "›",
  oe: "œ",
  zcaron: "ž",
  Ydieresis: "Ÿ",
  fi: "ﬁ",
  fl: "ﬂ",
  ff: "ﬀ",
  ffi: "ﬃ",
  ffl: "ﬄ",
  dotlessi: "ı",
  Lslash: "Ł",
  lslash: "ł",
  fraction: "⁄",
  minus: "−",
  breve: "˘",
  caron: "ˇ",
  dotaccent: "˙",
  hungarumlaut: "˝",
  ogonek: "˛",
  ring: "˚",
  space: " ",
  hyphen: "-",
  middot: "·",
  Omega: "Ω",
  Delta: "∆",
  pi: "π",
  summation: "∑",
  product: "∏",
  integral: "∫",
  infinity: "∞",
  notequal: "≠",
  lessequal: "≤",
  greaterequal: "≥",
  approxequal: "≈",
  partialdiff: "∂",
  radical: "√",
  lozenge: "◊",
  apple: "\uf8ff",
  nonbreakingspace: "\u00a0",
  softhyphen: "\u00ad",
};

const GLYPHS: Map<string, string> = (() => {
  const m = new Map<string, string>();
  ASCII_NAMES.split(" ").forEach((n, i) => m.set(n, String.fromCharCode(0x20 + i)));
  LATIN1_NAMES.split(" ").forEach((n, i) => m.set(n, String.fromCharCode(0xa0 + i)));
  for (const [k, v] of Object.entries(EXTRA_NAMES)) m.set(k, v);
  return m;
})();

/** Text for a glyph name: known names, uniXXXX(XXXX...), uXXXX[XX], ligatures a_b, suffixes .sc. */
export function glyphText(name: string): string {
  const known = GLYPHS.get(name);
  if (known !== undefined) return known;
  const base = name.split(".")[0];
  if (base !== name) return base ? glyphText(base) : "";
  if (base.includes("_")) return base.split("_").map(glyphText).join("");
  let m = /^uni((?:[0-9A-F]{4})+)$/.exec(base);
  if (m) {
    let s = "";
    for (let i = 0; i < m[1].length; i += 4) {
      const cp = parseInt(m[1].slice(i, i + 4), 16);
      if (cp < 0xd800 || cp > 0xdfff) s += String.fromCharCode(cp);
    }
    return s;
  }
  m = /^u([0-9A-F]{4,6})$/.exec(base);
  if (m) {
    const cp = parseInt(m[1], 16);
    return cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : "";
  }
  if (base.length === 1) return base;
  return "";
}

// Helvetica advance widths for ASCII 32-126 (Adobe AFM), the estimate for standard fonts that
// carry no /Widths (pdf-lib's StandardFonts among them); Courier is fixed-pitch.
const HELVETICA_ASCII = [
  278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556,
  556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833,
  722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556,
  556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334,
  260, 334, 584,
];

/** Width estimate (1/1000 em) for a code of a font without /Widths. */
export function standardWidths(baseFont: string): (code: number, text: string) => number {
  if (/Courier/i.test(baseFont)) return () => 600;
  return (_code, text) => {
    const c = text.charCodeAt(0);
    return c >= 32 && c <= 126 ? HELVETICA_ASCII[c - 32] : text ? 556 : 0;
  };
}

const PDFDOC_18_1F = "˘ˇˆ˙˝˛˚˜";
const PDFDOC_80_A0 = "•†‡…—–ƒ⁄‹›−‰„“”‘’‚™ﬁﬂŁŒŠŸŽıłœšž\ufffd€";

/** Decodes a PDF text string (§7.9.2.2): UTF-16BE or UTF-8 with a BOM, else PDFDocEncoding. */
export function decodeTextString(bytes: Uint8Array): string {
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    let s = "";
    for (let i = 2; i + 1 < bytes.length; i += 2) s += String.fromCharCode((bytes[i] << 8) | bytes[i + 1]);
    return s;
  }
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return new TextDecoder("utf-8").decode(bytes.subarray(3));
  }
  let s = "";
  for (const b of bytes) {
    if (b >= 0x18 && b <= 0x1f) s += PDFDOC_18_1F[b - 0x18];
    else if (b >= 0x80 && b <= 0xa0) s += PDFDOC_80_A0[b - 0x80];
    else s += String.fromCharCode(b);
  }
  return s;
}
