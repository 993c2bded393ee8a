// Finds the messages of a transcript in a body read chunk by chunk, never holding more than one
// message: the elements of a top-level `messages` array (an Anthropic Messages request or this
// API's JSON export; a bare top-level array too), or the lines of JSONL. Everything else in a JSON
// body is checked for well-formed structure and skipped. Nesting follows the rule of every JSON body
// (core/json-guard.ts): the document around the messages no deeper than MAX_JSON_DEPTH, each
// message no deeper than MAX_MESSAGE_DEPTH (the rule applied inside its content blocks: a stored tool
// call's input may nest as deep as any JSON body), and an export's `conversation` no deeper than
// MAX_METADATA_DEPTH (it copies a paused turn's calls, inputs and all), refused as soon as the
// bracket past it arrives, so what the scanner holds stays bounded whatever the body. A JSON body's
// messages are messages only: an element whose `type` is not `message` is refused (JSONL's metadata
// lines have no place there). The grammar around the messages is JSON's, token by token (each
// container's next token, escapes, nothing after the document), as JSON.parse would refuse it; each
// message's own text is parsed whole by the caller. Pure: the caller feeds decoded text.
import { jsonTextTooDeep, MAX_JSON_DEPTH, nestedTooDeep } from "../json-guard";

/** The levels around a block's fields: the message's brace, its content array, the block's brace. */
const MESSAGE_WRAPPER_LEVELS = 3;
/** How deep one message may nest: MAX_JSON_DEPTH inside each block's fields (a tool call's `input`). */
export const MAX_MESSAGE_DEPTH = MAX_JSON_DEPTH + MESSAGE_WRAPPER_LEVELS;

/** The refusal for a message nested past MAX_MESSAGE_DEPTH, the same from the scanner and the check. */
export const messageTooDeep = (where: string): string =>
  `${where}: nested deeper than ${MAX_MESSAGE_DEPTH} levels (${MAX_JSON_DEPTH} inside a content block's fields)`;

/** Whether one message's JSON text nests deeper than MAX_MESSAGE_DEPTH, read without parsing it. */
export const messageTextTooDeep = (text: string): boolean => jsonTextTooDeep(text, MAX_MESSAGE_DEPTH);

/**
 * The levels around a paused call's input in an export's conversation metadata (the JSON document's
 * `conversation`, or JSONL's `conversation` line): that object's brace, its `requiresAction`, the
 * `calls` array and the call. The call is a copy of a message's tool call, whose input may nest
 * MAX_JSON_DEPTH levels, so an export of a paused turn imports whatever the call's depth.
 */
const METADATA_WRAPPER_LEVELS = 4;
/** How deep an export's conversation metadata may nest, from its own brace. */
export const MAX_METADATA_DEPTH = MAX_JSON_DEPTH + METADATA_WRAPPER_LEVELS;

/** The refusal for conversation metadata nested past MAX_METADATA_DEPTH. */
export const metadataTooDeep = (where: string): string =>
  `${where}: nested deeper than ${MAX_METADATA_DEPTH} levels (${MAX_JSON_DEPTH} inside a paused call's input)`;

/** Raw JSON text of one element, and where it was (1-based line for JSONL). */
export interface RawMessage {
  text: string;
  line?: number;
}

export class ScanError extends Error {}

/** A JSON string's raw text as JSON.parse decodes it (kept raw when it is not one: cut short, say). */
function unescaped(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** A message's `type` whose value is not a string. */
const NOT_A_STRING = Symbol("not a string");

/**
 * What a container accepts next (JSON's grammar): an object's key (or its close, right after its
 * brace), the colon after a key, a value, or a comma or the close after a value.
 */
type Expect = "key" | "key-or-close" | "colon" | "value" | "value-or-close" | "comma-or-close";

/** The characters a JSON string's backslash may escape. */
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t", "u"]);
const HEX = /^[0-9a-fA-F]$/;

const BAREWORD = /^(true|false|null|-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)$/;

/** Streams the elements of the `messages` array out of a JSON document. */
export class JsonMessageScanner {
  private readonly stack: ("{" | "[")[] = [];
  /** What each open container accepts next, beside `stack` (checked outside the messages only). */
  private readonly expect: Expect[] = [];
  private inString = false;
  private escaped = false;
  /** Hex digits still owed by a `\u` escape. */
  private hexLeft = 0;
  /**
   * The last key read at depth 1 of a top-level object (or at depth 2, inside its `conversation`
   * object), and whether we wait for its value.
   */
  private key = "";
  private readingKey = false;
  private expectKey = false;
  private pendingKey: string | null = null;
  /** Depth of the messages array once entered (its elements sit at messagesDepth + 1). */
  private messagesDepth = -1;
  private messagesSeen = false;
  private element: string[] | null = null;
  private elementChars = 0;
  private bareword = "";
  private started = false;
  /** Inside the top-level `conversation` object (this API's JSON export), whose keys are read too. */
  private inConversation = false;
  /** The text of that object's `lastSeq` when it is a bare value (a number), else null. */
  private exportLastSeq: string | null = null;
  /**
   * The `type` of the element being read, when it has one (the last, as JSON.parse takes it):
   * decoded when a string, NOT_A_STRING otherwise; and the raw text of that string while it is read.
   */
  private elementType: string | typeof NOT_A_STRING | undefined;
  private typeText: string | null = null;

  constructor(private readonly maxMessageChars: number) {}

  /** Feeds a chunk of text; returns the elements completed inside it. */
  push(chunk: string): RawMessage[] {
    const out: RawMessage[] = [];
    this.out = out;
    let from = this.element ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i];
      const inMessages = this.messagesDepth >= 0 && this.stack.length === this.messagesDepth + 1;
      if (this.inString) {
        if (ch === '"' && !this.escaped && this.hexLeft === 0) {
          this.inString = false;
          if (this.readingKey) this.key = unescaped(this.key);
          this.readingKey = false;
          this.endType();
          continue;
        }
        // Outside a message (whose text JSON.parse reads whole), as JSON.parse reads a string.
        if (!this.element) this.checkStringChar(ch);
        this.escaped = !this.escaped && ch === "\\";
        // Raw, escapes and all, and decoded when the string ends, as JSON.parse reads it (a key
        // spelled with an escape is the same key); no key or type that counts is longer.
        if (this.readingKey && this.key.length <= 64) this.key += ch;
        if (this.typeText !== null && this.typeText.length <= 64) this.typeText += ch;
        continue;
      }
      if (ch === " " || ch === "\n" || ch === "\r" || ch === "\t") {
        this.endBareword();
        continue;
      }
      if (/[\w.+-]/.test(ch)) {
        if (!this.bareword) this.valueStarts(ch);
        if (inMessages && !this.element) throw new ScanError("messages: every element must be an object");
        this.bareword += ch;
        if (this.bareword.length > 400) throw new ScanError("body: malformed JSON (a value is not JSON)");
        continue;
      }
      this.endBareword();
      switch (ch) {
        case '"':
          if (this.atKey()) this.expect[this.expect.length - 1] = "colon";
          else this.valueStarts(ch);
          this.inString = true;
          if (this.expectKey && this.atKeyLevel()) {
            this.readingKey = true;
            this.key = "";
            this.expectKey = false;
          } else if (inMessages && !this.element) throw new ScanError("messages: every element must be an object");
          else if (this.pendingKey === "type" && this.atElementLevel()) this.typeText = "";
          break;
        case "{":
        case "[": {
          if (!this.started && ch === "[") {
            this.messagesDepth = 0;
            this.messagesSeen = true;
          }
          this.valueStarts(ch);
          const startsElement = inMessages && !this.element;
          if (startsElement) {
            if (ch !== "{") throw new ScanError("messages: every element must be an object");
            this.element = [];
            this.elementChars = 0;
            this.elementType = undefined;
            from = i;
          }
          if (ch === "[" && this.pendingKey === "messages" && this.stack.length === 1) {
            if (this.messagesSeen) throw new ScanError("body: two messages arrays");
            this.messagesSeen = true;
            this.messagesDepth = 1;
          }
          // A later `conversation` key replaces an earlier one's value, as JSON.parse takes the last.
          const intoConversation = ch === "{" && this.pendingKey === "conversation" && this.stack.length === 1;
          if (intoConversation) this.exportLastSeq = null;
          this.pendingKey = null;
          this.checkDepth();
          this.stack.push(ch);
          this.expect.push(ch === "{" ? "key-or-close" : "value-or-close");
          if (intoConversation) this.inConversation = true;
          if (ch === "{" && (this.stack.length === 1 || intoConversation || startsElement)) this.expectKey = true;
          break;
        }
        case "}":
        case "]": {
          const expected = this.expect.at(-1);
          const closes = expected === "comma-or-close" || expected === `${ch === "}" ? "key" : "value"}-or-close`;
          // A message's own closing brace is checked by its parse, as everything inside it.
          if (!this.element && this.stack.length && !closes) throw this.unexpected(ch);
          const open = this.stack.pop();
          if (open !== (ch === "}" ? "{" : "[")) throw new ScanError("body: malformed JSON (unbalanced brackets)");
          this.expect.pop();
          if (this.element && this.stack.length === this.messagesDepth + 1) {
            this.checkElementType();
            if (this.elementChars + (i + 1 - from) > this.maxMessageChars)
              throw new ScanError(`${this.where()}: larger than ${this.maxMessageChars} characters`);
            this.element.push(chunk.slice(from, i + 1));
            out.push({ text: this.element.join("") });
            this.element = null;
            from = -1;
          }
          if (ch === "]" && this.stack.length === this.messagesDepth) this.messagesDepth = -2;
          if (this.inConversation && this.stack.length === 1) {
            // Its last key named a field of the conversation, not of the document.
            this.inConversation = false;
            this.pendingKey = null;
          }
          break;
        }
        case ":":
          this.follows(ch, "colon", "value");
          if (this.atKeyLevel()) {
            this.pendingKey = this.key;
            // A duplicate `lastSeq` counts as its last value: one that is not a number leaves none.
            if (this.inConversation && this.key === "lastSeq") this.exportLastSeq = null;
            // Likewise a message's `type`: a string value replaces this when it ends (endType).
            if (this.key === "type" && this.atElementLevel()) this.elementType = NOT_A_STRING;
          }
          break;
        case ",":
          this.follows(ch, "comma-or-close", this.stack.at(-1) === "{" ? "key" : "value");
          if (this.atKeyLevel()) this.expectKey = true;
          break;
        default:
          // Named by its code point when it cannot be seen (a no-break space, a line separator).
          throw new ScanError(
            `body: malformed JSON (unexpected ${/^[\x21-\x7e]$/.test(ch) ? `"${ch}"` : `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`})`,
          );
      }
    }
    if (this.element && from >= 0) {
      const rest = chunk.slice(from);
      this.elementChars += rest.length;
      if (this.elementChars > this.maxMessageChars)
        throw new ScanError(`${this.where()}: larger than ${this.maxMessageChars} characters`);
      this.element.push(rest);
    }
    return out;
  }

  /**
   * Whether the document is this API's export of a conversation with no messages: its top-level
   * `conversation` says `lastSeq` 0 (the rule ExportLines holds for JSONL). An export whose
   * messages were cut or edited away says otherwise, so its empty `messages` is refused as empty.
   */
  get emptyExport(): boolean {
    return this.exportLastSeq !== null && Number(this.exportLastSeq) === 0;
  }

  /** Set by the caller so a size error can name the message. */
  countHint = 0;
  /** The elements the current push found: not yet counted by the caller. */
  private out: readonly RawMessage[] = [];

  /** The message being read: those the caller took, then those this push found before it. */
  private where(): string {
    return `messages[${this.countHint + this.out.length}]`;
  }

  /**
   * Before a bracket opens: a message is measured from its own brace (MAX_MESSAGE_DEPTH), the
   * export's `conversation` from its own (MAX_METADATA_DEPTH; its brace is the document's level 2),
   * anything else from the document's first bracket.
   */
  private checkDepth(): void {
    if (this.element) {
      if (this.stack.length - (this.messagesDepth + 1) >= MAX_MESSAGE_DEPTH)
        throw new ScanError(messageTooDeep(this.where()));
    } else if (this.inConversation) {
      if (this.stack.length - 1 >= MAX_METADATA_DEPTH) throw new ScanError(metadataTooDeep("conversation"));
    } else if (this.stack.length >= MAX_JSON_DEPTH) throw new ScanError(nestedTooDeep("body"));
  }

  /** The refusal for a token JSON's grammar has no place for here. */
  private unexpected(token: string): ScanError {
    if (this.stack.length === 0) return new ScanError("body: malformed JSON (text after the document)");
    const wanted: Record<Expect, string> = {
      key: "a key",
      "key-or-close": 'a key or "}"',
      colon: '":" after a key',
      value: "a value",
      "value-or-close": 'a value or "]"',
      "comma-or-close": `"," or "${this.stack.at(-1) === "{" ? "}" : "]"}"`,
    };
    const at = this.expect.at(-1);
    return new ScanError(
      `body: malformed JSON (unexpected ${JSON.stringify(token.slice(0, 20))}${at ? `; expected ${wanted[at]}` : ""})`,
    );
  }

  /**
   * A value begins (a string, a bareword, a bracket): the document's first, or where its container
   * takes one. Inside a message the grammar is left to JSON.parse of the message's text.
   */
  private valueStarts(token: string): void {
    if (this.stack.length === 0) {
      if (this.started) throw this.unexpected(token);
      this.started = true;
      return;
    }
    if (this.element) return;
    const at = this.expect.at(-1);
    if (at !== "value" && at !== "value-or-close") throw this.unexpected(token);
    this.expect[this.expect.length - 1] = "comma-or-close";
  }

  /** A colon or a comma: only where the container expects it (outside a message). */
  private follows(token: string, wanted: Expect, then: Expect): void {
    if (this.stack.length === 0) throw this.unexpected(token);
    if (this.element) return;
    if (this.expect.at(-1) !== wanted) throw this.unexpected(token);
    this.expect[this.expect.length - 1] = then;
  }

  /** Whether a string here is an object's key (outside a message, where the grammar is tracked). */
  private atKey(): boolean {
    if (this.element || this.stack.length === 0) return false;
    const at = this.expect.at(-1);
    return at === "key" || at === "key-or-close";
  }

  /** One character of a string outside a message: escapes and control characters as JSON allows. */
  private checkStringChar(ch: string): void {
    if (this.hexLeft > 0) {
      if (!HEX.test(ch)) throw new ScanError('body: malformed JSON (a "\\u" escape needs four hex digits)');
      this.hexLeft--;
    } else if (this.escaped) {
      if (!ESCAPES.has(ch))
        throw new ScanError(`body: malformed JSON (bad escape "\\${ch < " " ? "" : ch}" in a string)`);
      if (ch === "u") this.hexLeft = 4;
    } else if (ch < " ") throw new ScanError("body: malformed JSON (a control character in a string)");
  }

  /**
   * Where a key is read: depth 1 of a top-level object, depth 2 inside its `conversation` object,
   * or a message's own level (for its `type`).
   */
  private atKeyLevel(): boolean {
    return (
      (this.stack.length === 1 && this.stack[0] === "{") ||
      (this.inConversation && this.stack.length === 2) ||
      this.atElementLevel()
    );
  }

  /** Inside a message's own brace (not deeper). */
  private atElementLevel(): boolean {
    return this.element !== null && this.stack.length === this.messagesDepth + 2;
  }

  /** A string value of a message's `type` ended. */
  private endType(): void {
    if (this.typeText === null) return;
    this.elementType = unescaped(this.typeText);
    this.typeText = null;
  }

  /**
   * A message ended: one with a `type` must say `message`. A JSON body has no metadata lines: a
   * JSONL export's (`{"type":"conversation","lastSeq":0}`) posing as an element would otherwise be
   * skipped as one and, with no message, import as an empty export, though the document has no
   * top-level `conversation` to say so.
   */
  private checkElementType(): void {
    const type = this.elementType;
    if (type === undefined || type === "message") return;
    const said = type === NOT_A_STRING ? "a type that is not a string" : `type ${JSON.stringify(type.slice(0, 40))}`;
    throw new ScanError(
      `${this.where()}: ${said} is not a message's; a JSON body's messages are messages only (this API's JSON export carries its conversation at the top level)`,
    );
  }

  private endBareword(): void {
    if (!this.bareword) return;
    if (!BAREWORD.test(this.bareword))
      throw new ScanError(`body: malformed JSON ("${this.bareword.slice(0, 20)}" is not a JSON value)`);
    if (this.inConversation && this.stack.length === 2 && this.pendingKey === "lastSeq")
      this.exportLastSeq = this.bareword;
    this.bareword = "";
  }

  /** The document ended: it must be complete and have held a messages array. */
  end(): void {
    this.endBareword();
    if (this.inString || this.stack.length) throw new ScanError("body: malformed JSON (the document ends early)");
    if (!this.started) throw new ScanError("body: empty; send a transcript");
    if (!this.messagesSeen) throw new ScanError('messages: missing (send {"messages": [...]})');
  }
}

/** Splits JSONL into lines, each bounded; blank lines are skipped. */
export class JsonlMessageScanner {
  private partial: string[] = [];
  private partialChars = 0;
  private line = 0;

  constructor(private readonly maxMessageChars: number) {}

  push(chunk: string): RawMessage[] {
    const out: RawMessage[] = [];
    let start = 0;
    for (let nl = chunk.indexOf("\n"); nl >= 0; nl = chunk.indexOf("\n", start)) {
      this.partial.push(chunk.slice(start, nl));
      this.emit(out);
      start = nl + 1;
    }
    const rest = chunk.slice(start);
    this.partialChars += rest.length;
    if (this.partialChars > this.maxMessageChars)
      throw new ScanError(`line ${this.line + 1}: larger than ${this.maxMessageChars} characters`);
    if (rest) this.partial.push(rest);
    return out;
  }

  private emit(out: RawMessage[]): void {
    this.line++;
    const text = this.partial.join("").replace(/\r$/, "");
    this.partial = [];
    this.partialChars = 0;
    if (text.length > this.maxMessageChars)
      throw new ScanError(`line ${this.line}: larger than ${this.maxMessageChars} characters`);
    if (text.trim()) out.push({ text, line: this.line });
  }

  end(): RawMessage[] {
    const out: RawMessage[] = [];
    if (this.partial.length) this.emit(out);
    return out;
  }
}
