/**
 * Summarization requests. The offline model reads them from what the real prompt says, as a real
 * model would, so nothing meant only for the stand-in ever rides a prompt:
 *
 *   - the system prompt's first sentence asks for a summary ("summary", "summarize");
 *   - "at most N characters" in it is the hard cap (default 4,000);
 *   - "… these sections …: TASK (what was asked), PROGRESS (…), …" names the headings (the
 *     upper-case words of that line, in order).
 *
 * The answer is a deterministic, extractive summary instead of a chat reply, so context
 * compaction can be tested end to end without a real model. With sections: each heading as
 * `HEADING:` on its own line followed by `- item` lines; sections separated by a blank line.
 * Without sections: the previous summary's items, then the extracted sentences and decisions, as
 * `- item` lines, then an `Identifiers:` section. At the cap, the new items keep at least half of
 * the room (the oldest previous items give way), the decisions and the last user request first.
 */
import { sliceWhole } from "../text-cut";
import { stripDirectives } from "./directives";
import { blocksOf, systemText, toolResultText, type WireMessage, type WireRequest } from "./wire";

export const DEFAULT_SUMMARY_MAX_CHARS = 4_000;

const ASKS_FOR_SUMMARY = /\bsummar(?:y|ies|ize|ise|izing|ising)\b/i;
const CAP = /\bat most ([\d,_]+) characters\b/i;
const SECTIONS_LINE = /\bthese sections\b[^:\n]*:([^\n]+)/i;
const FIRST_SENTENCE_MAX = 240;

export interface SummarizeOptions {
  maxChars: number;
  sections: string[];
}

/** The system prompt's opening sentence: up to the first sentence end or line break. */
function openingSentence(system: string): string {
  const text = system.trimStart();
  const end = text.search(/[.!?](?:\s|$)|\n/);
  return end < 0 ? text : sliceWhole(text, 0, end);
}

/** Options when the system prompt asks for a summary, otherwise null (a chat request). */
export function summarizeOptions(request: Pick<WireRequest, "system">): SummarizeOptions | null {
  const system = systemText(request.system);
  if (!ASKS_FOR_SUMMARY.test(openingSentence(system))) return null;
  const capMatch = CAP.exec(system);
  const maxChars = capMatch ? Number(capMatch[1].replace(/[,_]/g, "")) : DEFAULT_SUMMARY_MAX_CHARS;
  const sectionsLine = SECTIONS_LINE.exec(system)?.[1] ?? "";
  const sections = sectionsLine
    .replace(/\([^)]*\)/g, "")
    .split(",")
    .map((part) => part.replace(/[.;]+\s*$/, "").trim())
    .filter((heading) => /^[A-Z][A-Z_]*$/.test(heading));
  return { maxChars: Number.isFinite(maxChars) ? maxChars : DEFAULT_SUMMARY_MAX_CHARS, sections };
}

interface Extract {
  userFirsts: string[];
  assistantFirsts: string[];
  identifiers: string[];
  decisions: string[];
}

/** Deterministic extractive summary of the request's conversation, never longer than the cap. */
export function summarize(request: Pick<WireRequest, "messages">, options: SummarizeOptions): string {
  const { messages, previous } = unpackTranscript(request.messages);
  const extract = extractFrom(messages);
  for (const id of previous.identifiers) if (!extract.identifiers.includes(id)) extract.identifiers.unshift(id);
  const sections: Section[] =
    options.sections.length > 0
      ? options.sections.map((heading) => ({ heading, items: itemsFor(heading, extract) }))
      : [plainSection(previous.items, extract)];
  if (options.sections.length === 0 && extract.identifiers.length > 0) {
    sections.push({ heading: "Identifiers", items: [extract.identifiers.join(", ")] });
  }
  return fitToCap(sections, Math.max(0, Math.floor(options.maxChars)));
}

const SEQ_HEADER = /^\[seq (\d+) (user|assistant|tool results)\]$/;

/**
 * A summarizer prompt that pastes a transcript into one user message (`[seq N role]` headers,
 * inside `<previous_summary>` / `<new_messages>` wrappers as the fold sends, or bare as the
 * in-turn compactor sends) is read as the
 * conversation it quotes: one message per header, the previous summary's items and identifiers
 * carried forward, and the wrapper tags and the closing instruction left out.
 */
function unpackTranscript(messages: readonly WireMessage[]): {
  messages: WireMessage[];
  previous: { items: string[]; identifiers: string[] };
} {
  const previous = { items: [] as string[], identifiers: [] as string[] };
  const text =
    messages.length === 1 && messages[0].role === "user"
      ? blocksOf(messages[0].content)
          .map((b) => (b.type === "text" ? String(b.text ?? "") : ""))
          .join("\n")
      : "";
  const quoted = /<new_messages>/.test(text);
  if (!quoted && !/^\[seq \d+ (user|assistant|tool results)\]$/m.test(text))
    return { messages: [...messages], previous };
  const prior = /<previous_summary>([\s\S]*?)<\/previous_summary>/.exec(text)?.[1] ?? "";
  for (const line of prior.split("\n")) {
    const item = /^\s*-\s+(.+)$/.exec(line)?.[1]?.trim();
    if (item) previous.items.push(item);
  }
  const ids = /Identifiers:\s*\n\s*-\s*(.+)/i.exec(prior)?.[1];
  if (ids) {
    previous.identifiers = ids
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean);
    previous.items = previous.items.filter((item) => item !== ids.trim());
  }
  const body = quoted ? (/<new_messages>([\s\S]*?)(?:<\/new_messages>|$)/.exec(text)?.[1] ?? "") : text;
  // One message per header; its text accumulates under it. Quoted tool results stay results, so
  // they feed identifiers but not the user's or the assistant's sentences.
  const out: { role: "user" | "assistant"; kind: "text" | "tool_result"; text: string }[] = [];
  for (const line of body.split("\n")) {
    const header = SEQ_HEADER.exec(line.trim());
    if (header)
      out.push({
        role: header[2] === "assistant" ? "assistant" : "user",
        kind: header[2] === "tool results" ? "tool_result" : "text",
        text: "",
      });
    else if (out.length && !/^\[… \d+ later messages omitted/.test(line.trim())) {
      const last = out[out.length - 1];
      last.text = last.text ? `${last.text}\n${line}` : line;
    }
  }
  const quotedMessages: WireMessage[] = out.map((m, i) => ({
    role: m.role,
    content: [
      m.kind === "text"
        ? { type: "text", text: m.text }
        : { type: "tool_result", tool_use_id: `quoted_${i}`, content: m.text },
    ],
  })) as WireMessage[];
  return { messages: quotedMessages, previous };
}

function extractFrom(messages: readonly WireMessage[]): Extract {
  const userFirsts = new Set<string>();
  const assistantFirsts = new Set<string>();
  const identifiers = new Set<string>();
  const decisions = new Set<string>();
  for (const message of messages) {
    for (const block of blocksOf(message.content)) {
      const text =
        block.type === "text"
          ? stripDirectives(String(block.text ?? ""))
          : block.type === "tool_result"
            ? toolResultText(block)
            : block.type === "tool_use"
              ? `${String(block.name ?? "")} ${JSON.stringify(block.input ?? {})}`
              : "";
      if (text.trim() === "") continue;
      for (const id of findIdentifiers(text)) identifiers.add(id);
      if (block.type !== "text") continue;
      const first = firstSentence(text);
      if (first) (message.role === "user" ? userFirsts : assistantFirsts).add(first);
      // A transcript pasted into one message still has one "first sentence" per speaker turn.
      for (const match of text.matchAll(/^[ \t]*(?:user|human)[ \t]*:[ \t]*(.+)$/gim)) {
        const turn = firstSentence(match[1]);
        if (turn) userFirsts.add(turn);
      }
      for (const sentence of sentences(text)) if (DECISION_WORDS.test(sentence)) decisions.add(sentence);
    }
  }
  return {
    userFirsts: [...userFirsts],
    assistantFirsts: [...assistantFirsts],
    identifiers: [...identifiers],
    decisions: [...decisions],
  };
}

const DECISION_WORDS = /\b(decid\w*|decision|chose|choose|agreed?|settled|will use|going with|instead of)\b/i;

/**
 * The plain shape's one section: the previous summary's items carried first, then this request's
 * user and assistant sentences and its decisions; the decisions and the last user request are
 * the new items kept first when the cap is tight.
 */
function plainSection(carried: string[], extract: Extract): Section {
  const users = extract.userFirsts;
  const items = [...new Set([...users, ...extract.decisions, ...extract.assistantFirsts])];
  const first = new Set([...extract.decisions, ...users.slice(-1)]);
  return { heading: "", items, carried: carried.filter((item) => !items.includes(item)), first };
}

function itemsFor(heading: string, extract: Extract): string[] {
  const h = heading.toUpperCase();
  const users = extract.userFirsts;
  if (/TASK|GOAL|OBJECTIVE|REQUEST/.test(h)) return users.slice(0, 1);
  if (/PROGRESS|DONE|STATUS/.test(h)) return [...users.slice(1, -1), ...extract.assistantFirsts];
  if (/REMAIN|TODO|NEXT|OPEN/.test(h)) return users.length > 1 ? users.slice(-1) : [];
  if (/DATA|IDENT|FACT|REFERENCE/.test(h)) return extract.identifiers.length ? [extract.identifiers.join(", ")] : [];
  if (/DECISION/.test(h)) return extract.decisions;
  return users;
}

/** The text's sentences, whitespace collapsed: each ends at a run of . ! or ? before whitespace or the end. */
export function sentences(text: string): string[] {
  const flat = text.replace(/\s+/g, " ").trim();
  // A sentence ends at . ! or ? followed by whitespace, so "ledger.csv" or "3.14" do not split it.
  // A scan, not a regex: /\S.*?[.!?]+(?=\s|$)|\S.*$/g splits the same but backtracked over a long
  // run of terminators not followed by whitespace, quadratically (80,000 of them: 16 s).
  const found: string[] = [];
  let start = 0;
  while (start < flat.length) {
    // flat's only whitespace is single spaces; a sentence starts at the next other character.
    if (flat[start] === " ") {
      start++;
      continue;
    }
    // It ends after the first run of terminators (past its first character) that a space follows,
    // else at the text's end.
    let end = start + 2;
    while (end < flat.length && !(isTerminator(flat[end - 1]) && flat[end] === " ")) end++;
    end = Math.min(end, flat.length);
    found.push(flat.slice(start, end));
    start = end;
  }
  return found.map((s) => s.trim()).filter(Boolean);
}

const isTerminator = (c: string) => c === "." || c === "!" || c === "?";

function firstSentence(text: string): string {
  const first = sentences(text)[0] ?? "";
  return first.length > FIRST_SENTENCE_MAX ? `${sliceWhole(first, 0, FIRST_SENTENCE_MAX - 1)}…` : first;
}

const TOKEN = /[A-Za-z0-9](?:[A-Za-z0-9_\-./]|,(?=\d{3}))*[A-Za-z0-9]/g;
const FILE_NAME = /^(?:[\w-]+\/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}$/;
// Abbreviations that look like "name.ext".
const NOT_FILES = new Set(["e.g", "i.e"]);

/** Ids, file names and numbers with 3+ digits, in order of first appearance. */
export function findIdentifiers(text: string): string[] {
  const found: string[] = [];
  for (const [token] of text.matchAll(TOKEN)) {
    const hasLetter = /[A-Za-z]/.test(token);
    const hasDigit = /\d/.test(token);
    const isFile = FILE_NAME.test(token) && !NOT_FILES.has(token.toLowerCase());
    const isId = hasLetter && ((hasDigit && token.length >= 3) || /[A-Za-z0-9]_[A-Za-z0-9]/.test(token));
    const isNumber = !hasLetter && /\d{3,}|\d{1,3}(?:,\d{3})+/.test(token);
    if (isFile || isId || isNumber) found.push(token);
  }
  return found;
}

interface Section {
  heading: string;
  /** This request's items, kept from the top (the `first` of them before the rest). */
  items: string[];
  /** Items carried over from a previous summary, listed before `items`: the oldest give way first. */
  carried?: string[];
  first?: Set<string>;
}

/** A section's items as listed: the carried ones, then this request's. */
const listed = (s: Section): string[] => [...(s.carried ?? []), ...s.items];

function render(section: Section, body: string): string {
  return section.heading ? `${section.heading}:\n${body}` : body;
}

function fullBody(items: readonly string[]): string {
  return items.length === 0 ? "- (none)" : items.map((item) => `- ${item}`).join("\n");
}

/**
 * Share the cap between sections so every heading survives: short sections
 * keep everything, the rest split what is left (water-filling), and each body
 * keeps whole items where it can.
 */
function fitToCap(sections: Section[], cap: number): string {
  const separators = 2 * (sections.length - 1);
  const fixed = sections.reduce((sum, s) => sum + (s.heading ? s.heading.length + 2 : 0), separators);
  const full = sections.map((s) => fullBody(listed(s)));
  const allowance = new Array<number>(sections.length).fill(0);
  let remaining = Math.max(0, cap - fixed);
  const order = sections.map((_, i) => i).sort((a, b) => full[a].length - full[b].length || a - b);
  order.forEach((index, k) => {
    const share = Math.floor(remaining / (order.length - k));
    allowance[index] = Math.min(full[index].length, share);
    remaining -= allowance[index];
  });
  const text = sections.map((section, i) => render(section, fitSection(section, full[i], allowance[i]))).join("\n\n");
  return sliceWhole(text, 0, cap);
}

/**
 * A section's body within its allowance. Carried items never take more than half of it when this
 * request's items need the room: a summary at its cap still keeps what each fold added, and the
 * oldest carried items give way.
 */
function fitSection(section: Section, full: string, allowance: number): string {
  const carried = section.carried ?? [];
  if (full.length <= allowance || carried.length === 0)
    return fitBody({ items: section.items, full, first: section.first }, allowance);
  const fresh = fullBody(section.items);
  const share = Math.min(fresh.length, Math.max(Math.ceil(allowance / 2), allowance - fullBody(carried).length - 1));
  const own = fitBody({ items: section.items, full: fresh, first: section.first }, share);
  const room = allowance - own.length - 1;
  const kept: string[] = [];
  let used = 0;
  for (let i = carried.length - 1; i >= 0; i--) {
    const cost = carried[i].length + 3;
    if (used + cost > room) break;
    kept.unshift(`- ${carried[i]}`);
    used += cost;
  }
  return [...kept, own].filter(Boolean).join("\n");
}

/** `items` (rendered whole as `full`) within `allowance`; the `first` items are chosen before the rest. */
function fitBody(
  { items, full, first }: { items: readonly string[]; full: string; first?: Set<string> },
  allowance: number,
): string {
  if (first?.size && full.length > allowance) {
    // The `first` items are chosen before the rest; all keep their order.
    const chosen = new Set<string>();
    let used = -1;
    for (const item of [...items.filter((x) => first.has(x)), ...items.filter((x) => !first.has(x))]) {
      if (used + item.length + 3 > allowance) continue;
      chosen.add(item);
      used += item.length + 3;
    }
    if (chosen.size > 0)
      return items
        .filter((x) => chosen.has(x))
        .map((x) => `- ${x}`)
        .join("\n");
  }
  if (full.length <= allowance) return full;
  const lines: string[] = [];
  let used = 0;
  for (const item of items) {
    const line = `- ${item}`;
    const cost = line.length + (lines.length > 0 ? 1 : 0);
    if (used + cost > allowance) break;
    lines.push(line);
    used += cost;
  }
  if (lines.length === 0 && allowance >= 4) lines.push(`- ${sliceWhole(items[0], 0, allowance - 3)}…`);
  return lines.join("\n");
}
