// Which thinking blocks a request may carry. Thinking is bound to what came before it: on current
// models a block is valid only while the system prompt, the tools and everything before it (the
// thinking blocks too) are byte-identical to when it was produced ("Thinking blocks are tied to
// the model and the conversation", models/sonnet-5-5/whats-new; build-with-claude/preserved-thinking).
// Earlier turns' thinking should go back ("Recommended: across turns", build-with-claude/thinking),
// but the lifecycle moves prefixes: a fold's preamble, a stub batch, a tool activated, the day's
// memory map, an in-turn compaction, a secret tool input withheld from the stored call.
//
// So each assistant message stores, per thinking block, a fingerprint of the request prefix it was
// produced after (`thinkingPrefixes`, computed from the request as sent and the reply as the API
// sent it). Every request is walked before it goes out: a block goes back only while its prefix —
// the thinking blocks before it included — is the one it was produced after; a block after one left
// out was produced with it, so it goes too ("You can remove thinking blocks … from the end, or all
// of them", preserved-thinking), while blocks produced after the move still match and go back. A
// block with no fingerprint (an imported transcript's) is never sent, so leaving it out moves
// nobody's prefix. Pure: the stored messages are all it needs, so both rebuild paths agree.
import { MIN_THINKING_BUDGET } from "./settings";
import { isThinkingBlock, type ContentBlock, type ModelRequest, type StoredMessage, type WireMessage } from "./types";

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

/** A thinking block's identity: its signature (or encrypted data), hashed short. */
export function thinkingKey(block: ContentBlock): string {
  const h = new RunningHash();
  h.feed(
    block.type === "thinking" ? `t${block.signature}` : block.type === "redacted_thinking" ? `r${block.data}` : "",
  );
  return h.value();
}

const blocksOf = (m: WireMessage): ContentBlock[] =>
  typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;

/**
 * Walks a prefix: tools, system, then every block with its role. A thinking block is fed by its key
 * (which earlier blocks were present is part of a block's prefix), others by their bytes.
 */
class PrefixWalk {
  private readonly h = new RunningHash();

  constructor(request: Pick<ModelRequest, "system" | "tools">) {
    this.h.feed(canonical(request.tools));
    this.h.feed(canonical(request.system));
  }

  feed(role: string, block: ContentBlock): void {
    this.h.feed(`${role}|${isThinkingBlock(block) ? `~${thinkingKey(block)}` : canonical(block)}`);
  }

  get fingerprint(): string {
    return this.h.value();
  }
}

/** Each thinking block of a reply (as the API sent it) with the prefix it followed: what its message stores. */
export function thinkingPrefixes(request: ModelRequest, reply: readonly ContentBlock[]): string[] | undefined {
  if (!reply.some(isThinkingBlock)) return undefined;
  const walk = new PrefixWalk(request);
  for (const m of request.messages) for (const b of blocksOf(m)) walk.feed(m.role, b);
  const out: string[] = [];
  for (const b of reply) {
    if (isThinkingBlock(b)) out.push(walk.fingerprint);
    walk.feed("assistant", b);
  }
  return out;
}

/** Every stored thinking block's key and the prefix it was produced after (a block without a signature has none: it cannot go back). */
export function knownThinking(
  history: readonly Pick<StoredMessage, "content" | "thinkingPrefixes">[],
): Map<string, string> {
  const known = new Map<string, string>();
  for (const m of history) {
    if (!m.thinkingPrefixes) continue;
    let i = 0;
    for (const b of m.content) {
      if (!isThinkingBlock(b)) continue;
      const prefix = m.thinkingPrefixes[i++];
      if (signed(b) && prefix) known.set(thinkingKey(b), prefix);
    }
  }
  return known;
}

/** A block cut off before its signature arrived cannot be sent back (an empty signature is a 400). */
const signed = (b: ContentBlock) =>
  b.type === "thinking" ? b.signature !== "" : b.type === "redacted_thinking" ? b.data !== "" : false;

/**
 * The request with only the thinking blocks that may go back (see the header); the same object when
 * all may. Each block is judged on its own: its fingerprint holds the keys of the thinking blocks
 * that were present before it, so a block that followed one now left out (a gap), or that was
 * produced while an earlier one was out (a re-insertion), no longer matches. In the latest assistant
 * message, whose thinking may not be partly dropped, one block that cannot go back takes the
 * message's other thinking with it.
 */
export function keepValidThinking(request: ModelRequest, known: ReadonlyMap<string, string>): ModelRequest {
  const lastAssistant = request.messages.map((m) => m.role).lastIndexOf("assistant");
  const latestDrops = lastAssistant >= 0 && wouldDrop(request, known, lastAssistant);
  const walk = new PrefixWalk(request);
  let changed = false;
  const messages: WireMessage[] = [];
  // The merged messages this pass made, each with its content array (its own, so later merges push in place).
  const merged = new Map<WireMessage, ContentBlock[]>();
  request.messages.forEach((m, index) => {
    const content: ContentBlock[] = [];
    for (const b of blocksOf(m)) {
      if (isThinkingBlock(b)) {
        const produced = known.get(thinkingKey(b));
        if (produced === undefined || produced !== walk.fingerprint || (index === lastAssistant && latestDrops)) {
          changed = true;
          continue;
        }
      }
      walk.feed(m.role, b);
      content.push(b);
    }
    if (!content.length) return;
    const prev = messages[messages.length - 1];
    // A message left empty is dropped; the messages around it merge, as the API merges same-role turns.
    if (prev && prev.role === m.role) {
      // Copied once, then pushed to: copying on every merge was quadratic in a run of same-role messages.
      let blocks = merged.get(prev);
      if (!blocks) {
        blocks = [...blocksOf(prev)];
        const into = { ...prev, content: blocks };
        merged.set(into, blocks);
        messages[messages.length - 1] = into;
      }
      for (const block of content) blocks.push(block);
    } else
      messages.push(content.length === blocksOf(m).length && typeof m.content !== "string" ? m : { ...m, content });
  });
  const out = changed ? { ...request, messages } : request;
  return loopLostItsThinking(out) ? { ...out, thinking: { type: "disabled" } } : withinMaxTokens(out);
}

/**
 * Manual thinking's budget below the request's max_tokens, as the API requires: a call whose
 * max_tokens was cut after the settings' checks (the overflow retry's learned reserve) takes the
 * budget down with it, or goes without thinking when not even the least budget fits.
 */
function withinMaxTokens(request: ModelRequest): ModelRequest {
  const thinking = request.thinking;
  if (thinking?.type !== "enabled" || thinking.budget_tokens < request.max_tokens) return request;
  const budget = request.max_tokens - 1;
  return budget >= MIN_THINKING_BUDGET
    ? { ...request, thinking: { ...thinking, budget_tokens: budget } }
    : { ...request, thinking: { type: "disabled" } };
}

/**
 * Manual thinking (`enabled`) requires the tool loop's latest assistant message to start with its
 * thinking ("When `thinking` is enabled, a final `assistant` message must start with a thinking
 * block … To avoid this requirement, disable `thinking`", the API's own 400). When the loop's prefix
 * moved (a tool activated, an in-turn compaction) and that thinking could not go back, the call is
 * sent without thinking, as that answer says; the next turn has its own configuration again.
 */
function loopLostItsThinking(request: ModelRequest): boolean {
  if (request.thinking?.type !== "enabled") return false;
  const messages = request.messages;
  const last = messages[messages.length - 1];
  const before = messages[messages.length - 2];
  if (last?.role !== "user" || before?.role !== "assistant") return false;
  if (!blocksOf(last).some((b) => b.type === "tool_result")) return false;
  const first = blocksOf(before)[0];
  return !first || !isThinkingBlock(first);
}

/** Whether a known thinking block of message `at` would be left out (unknown ones, never sent, do not count). */
function wouldDrop(request: ModelRequest, known: ReadonlyMap<string, string>, at: number): boolean {
  const walk = new PrefixWalk(request);
  for (const [index, m] of request.messages.entries()) {
    for (const b of blocksOf(m)) {
      if (isThinkingBlock(b)) {
        const produced = known.get(thinkingKey(b));
        if (produced === undefined) continue;
        if (produced !== walk.fingerprint) {
          if (index === at) return true;
          continue;
        }
      }
      walk.feed(m.role, b);
    }
    if (index === at) return false;
  }
  return false;
}
