/**
 * The input of a tool call cut at max_tokens, as the client reads it. The API streams a call's
 * input as `input_json_delta` fragments; when the budget runs out they stop mid-JSON, and the SDK's
 * MessageStream reads the text it got with its partial-JSON parser
 * (node_modules/@anthropic-ai/sdk/_vendor/partial-json-parser/parser.mjs). A non-streamed answer
 * carries that same reading. This is that parser's reading of a cut JSON text: a string the cut
 * left open is dropped, and so are a number that runs to the end (more digits might follow), a
 * literal cut short, a key with no value yet, a dangling colon or comma; the open brackets are then
 * closed. Only for prefixes of JSON.stringify's output, which is all the offline model cuts.
 */
import type { WireBlock } from "./wire";

interface Token {
  kind: "open" | "close" | "colon" | "comma" | "string" | "number" | "literal";
  text: string;
  /** A number that runs to the end of the cut text. */
  atEnd?: boolean;
}

const LITERALS = ["true", "false", "null"];
// Read where the tokenizer stands (sticky), not from a copy of the rest: a long cut input with
// many numbers stays linear.
const NUMBER = /-?[0-9.eE+-]*/y;
const WORD = /[a-z]*/y;

function tokenize(json: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < json.length) {
    const char = json[i];
    if (char === "{" || char === "[") tokens.push({ kind: "open", text: char });
    else if (char === "}" || char === "]") tokens.push({ kind: "close", text: char });
    else if (char === ":") tokens.push({ kind: "colon", text: char });
    else if (char === ",") tokens.push({ kind: "comma", text: char });
    else if (char === '"') {
      const end = closingQuote(json, i + 1);
      // A string the cut left open is no token at all.
      if (end < 0) break;
      tokens.push({ kind: "string", text: json.slice(i, end + 1) });
      i = end + 1;
      continue;
    } else if (/[-0-9]/.test(char)) {
      NUMBER.lastIndex = i;
      const number = NUMBER.exec(json)![0];
      i += number.length;
      tokens.push({ kind: "number", text: number, atEnd: i === json.length });
      continue;
    } else if (/[a-z]/.test(char)) {
      WORD.lastIndex = i;
      const word = WORD.exec(json)![0];
      i += word.length;
      // A literal cut short (`nu`) is dropped; only a prefix of JSON comes here, so nothing else.
      if (LITERALS.includes(word)) tokens.push({ kind: "literal", text: word });
      continue;
    }
    i += 1;
  }
  return tokens;
}

/** Where the string opened before `from` closes: the first `"` after an even run of backslashes; -1 if none. */
function closingQuote(json: string, from: number): number {
  for (let end = json.indexOf('"', from); end >= 0; end = json.indexOf('"', end + 1)) {
    let backslashes = 0;
    while (end - 1 - backslashes >= from && json[end - 1 - backslashes] === "\\") backslashes++;
    if (backslashes % 2 === 0) return end;
  }
  return -1;
}

/** The tokens less the unfinished tail the SDK's parser strips, in its order. */
function strip(tokens: Token[]): Token[] {
  const open: string[] = [];
  for (const token of tokens)
    if (token.kind === "open") open.push(token.text);
    else if (token.kind === "close") open.pop();
  const innermost = open.at(-1);
  let length = tokens.length;
  while (length > 0) {
    const last = tokens[length - 1];
    const before = tokens[length - 2];
    if (last.kind === "colon" || (last.kind === "number" && last.atEnd)) {
      length--;
      continue;
    }
    // In an object a string after `{` or `,` is a key still waiting for its value.
    if (
      last.kind === "string" &&
      innermost === "{" &&
      (before?.kind === "comma" || (before?.kind === "open" && before.text === "{"))
    ) {
      length--;
      continue;
    }
    // Whatever precedes a comma is complete.
    if (last.kind === "comma") length--;
    break;
  }
  return tokens.slice(0, length);
}

/** What a client reads from `json`, a prefix of a JSON object's text: `{}` when nothing of it is complete. */
export function partialJsonInput(json: string): Record<string, unknown> {
  const tokens = strip(tokenize(json));
  if (tokens.length === 0) return {};
  const closers: string[] = [];
  for (const token of tokens)
    if (token.kind === "open") closers.push(token.text === "{" ? "}" : "]");
    else if (token.kind === "close") closers.pop();
  const text = tokens.map((token) => token.text).join("") + closers.reverse().join("");
  return JSON.parse(text) as Record<string, unknown>;
}

/** The JSON text each cut call's input was read from: its stream sends that text, not the reading. */
const cutTexts = new WeakMap<WireBlock, string>();

/** A tool call whose input JSON text was cut to `json`: its input as the client reads it. */
export function cutToolCall(block: WireBlock, json: string): WireBlock {
  const cut = { ...block, input: partialJsonInput(json) };
  cutTexts.set(cut, json);
  return cut;
}

/** The JSON text a call's `input_json_delta`s carry: all of its input, or where a cut stopped it. */
export const inputJsonText = (block: WireBlock): string => cutTexts.get(block) ?? JSON.stringify(block.input ?? {});
