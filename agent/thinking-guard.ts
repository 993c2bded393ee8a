// Thinking blocks are bound to what came before them: on current models a block is valid only while
// the system prompt, the tools and everything before it are byte-identical to when it was produced
// ("Thinking blocks are tied to the model and the conversation", models/sonnet-5-5/whats-new;
// build-with-claude/preserved-thinking). Within a turn the lifecycle can move that prefix: an
// in-turn compaction, a tool_activate that adds a schema, a fold or a stub batch landing, the
// day's memory map, a secret tool input withheld from the stored call.
//
// The guard remembers, for each thinking block a call of the turn produced, a fingerprint of the
// request prefix it was produced after. Before each call it walks the request; from the first
// thinking block whose prefix changed (or that it never saw produced) on, every thinking block is
// left out. Removing thinking blocks "from the end, or all of them" is valid, while a changed prefix
// under a kept block is a 400 (preserved-thinking, "Keeping the prefix unchanged").
import { isThinkingBlock, type ContentBlock, type ModelRequest, type WireMessage } from "../core/types";

/** A 53-bit running hash (two 32-bit lanes), fed piece by piece. */
class RunningHash {
  private h1 = 0xdeadbeef;
  private h2 = 0x41c6ce57;

  feed(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      this.h1 = Math.imul(this.h1 ^ ch, 2654435761);
      this.h2 = Math.imul(this.h2 ^ ch, 1597334677);
    }
    this.h1 = Math.imul(this.h1 ^ 0x1f, 2654435761);
  }

  value(): string {
    let h1 = Math.imul(this.h1 ^ (this.h1 >>> 16), 2246822507) ^ Math.imul(this.h2 ^ (this.h2 >>> 13), 3266489909);
    const h2 = Math.imul(this.h2 ^ (this.h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    h1 >>>= 0;
    return (4294967296 * (2097151 & h2) + h1).toString(36);
  }
}

const canonical = (value: unknown) => JSON.stringify(value, (k, v) => (k === "cache_control" ? undefined : v));

/** A block's identity: its signature (or encrypted data), hashed short. */
function keyOf(block: ContentBlock): string {
  const h = new RunningHash();
  h.feed(block.type === "thinking" ? `t${block.signature}` : block.type === "redacted_thinking" ? `r${block.data}` : "");
  return h.value();
}

/** Feeds the request's prefix: tools, system, then each non-thinking block with its role. */
function startWalk(request: Pick<ModelRequest, "system" | "tools">): RunningHash {
  const h = new RunningHash();
  h.feed(canonical(request.tools));
  h.feed(canonical(request.system));
  return h;
}

const blocksOf = (m: WireMessage): ContentBlock[] => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content);

export class ThinkingGuard {
  private readonly known: Map<string, string>;

  /** `produced`: what an earlier instance of the turn recorded (a paused turn resumed elsewhere). */
  constructor(produced: Record<string, string> = {}) {
    this.known = new Map(Object.entries(produced));
  }

  /** What it knows, to be kept with a paused turn. */
  snapshot(): Record<string, string> {
    return Object.fromEntries(this.known);
  }

  /** After a call: each thinking block of the reply (as the API sent it) and the prefix it followed. */
  record(request: ModelRequest, reply: readonly ContentBlock[]): void {
    if (!reply.some(isThinkingBlock)) return;
    const h = startWalk(request);
    for (const m of request.messages) for (const b of blocksOf(m)) if (!isThinkingBlock(b)) h.feed(`${m.role}|${canonical(b)}`);
    for (const b of reply) {
      if (isThinkingBlock(b)) this.known.set(keyOf(b), h.value());
      else h.feed(`assistant|${canonical(b)}`);
    }
  }

  /** The request with every thinking block from the first one whose prefix moved left out. */
  apply(request: ModelRequest): ModelRequest {
    const h = startWalk(request);
    let cut: { message: number; block: number } | null = null;
    request.messages.forEach((m, i) => {
      if (cut) return;
      blocksOf(m).forEach((b, j) => {
        if (cut) return;
        if (isThinkingBlock(b)) {
          if (this.known.get(keyOf(b)) !== h.value()) cut = { message: i, block: j };
        } else h.feed(`${m.role}|${canonical(b)}`);
      });
    });
    if (!cut) return request;
    const from = cut as { message: number; block: number };
    const messages: WireMessage[] = [];
    request.messages.forEach((m, i) => {
      if (i < from.message || typeof m.content === "string") return void messages.push(m);
      const content = m.content.filter((b, j) => !isThinkingBlock(b) || (i === from.message && j < from.block));
      if (!content.length) return;
      const prev = messages[messages.length - 1];
      // A message left empty is dropped; the messages around it merge, as the API merges same-role turns.
      if (prev && prev.role === m.role && typeof prev.content !== "string") messages[messages.length - 1] = { ...prev, content: [...prev.content, ...content] };
      else messages.push({ ...m, content });
    });
    return { ...request, messages };
  }
}
