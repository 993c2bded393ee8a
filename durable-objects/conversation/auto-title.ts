// The automatic title: after a turn that completes the conversation's first exchange, if the
// conversation still has no title (or the default "New conversation"), one small call to the
// conversation's model (through the turn's own client, so Anthropic or the offline model as the
// turn) writes it. It runs after the turn ended (ctx.waitUntil), so it never delays or fails a
// turn; a failed, empty, refused or cut-off answer leaves the title unset, and it is tried once
// per conversation.
// The exchange is the first a replay keeps: a refused turn is left out (core/replay-rules.ts
// withoutRefusedTurns, as of every later request), and while none is left the one try is not used
// up, so the next answered turn titles the conversation. A title the user set (POST with a title,
// or PATCH) is never replaced. The call's tokens are metered (kind "title" in GET /v1/usage),
// whether or not its answer becomes the title.
import type Anthropic from "@anthropic-ai/sdk";
import { billedUsage } from "../../agent/model-reply";
import type { ModelEntry } from "../../core/models/catalog";
import { startsTurn } from "../../core/replay-rules";
import { wellFormedDeep } from "../../core/text-cut";
import { buildTitleRequest, cleanTitle, firstExchange, untitled } from "../../core/title";
import type { StoredMessage } from "../../core/types";
import type { ConversationHead } from "../../services/record/conversation-head";
import { ConversationGone } from "./conversation-delete";
import type { ConversationStore } from "./conversation-store";
import type { IndexOutbox } from "./index-outbox";
import type { ObjectScope } from "./object-scope";
import type { ConversationRecord } from "./record";
import { masterMessages } from "./regenerate";

/** The title call's bound: it is a few tokens, and nothing waits on it. */
export const TITLE_CALL_TIMEOUT_MS = 30_000;
/** The messages read at a time while the first exchange is looked for (a page only while none is found). */
const PAGE_MESSAGES = 40;
/**
 * How far into the transcript the first exchange is looked for. An untitled conversation is searched
 * again after every turn: one with no exchange to find (every turn refused, replies of tool calls
 * alone) must not cost a read of its whole transcript each time.
 */
const MAX_SEARCHED_MESSAGES = 2_000;

/** What the first exchange is read from: the object's store. */
export type ExchangeSource = Pick<ConversationStore, "lastSeq" | "transcriptPage" | "refusalBetween">;

/**
 * The first exchange a replay keeps between turns: firstExchange over withoutRefusedTurns (between
 * turns) of the master's messages, read a page at a time from the first until it is found or the
 * messages end. A first turn of many tool steps puts its reply's text past any fixed number of
 * messages, so the pages go on, up to `maxMessages`; no more than a page, the prompt and the reply
 * are held. What is sent for the title stays bounded all the same (core/title.ts cuts both).
 */
export function firstKeptExchange(
  store: ExchangeSource,
  {
    head,
    pageMessages = PAGE_MESSAGES,
    maxMessages = MAX_SEARCHED_MESSAGES,
  }: { head: Pick<ConversationHead, "superseded">; pageMessages?: number; maxMessages?: number },
): { prompt: string; reply: string } | null {
  const last = store.lastSeq();
  const bound = Math.min(last, maxMessages);
  const scan = new KeptExchangeScan((seq) => store.refusalBetween(seq, last));
  let prev: StoredMessage | undefined;
  let cur: StoredMessage | undefined;
  for (let after = 0, more = bound > 0; more; ) {
    const page = store.transcriptPage(after, { limit: pageMessages, through: bound });
    if (!page.messages.length) break;
    after = page.messages[page.messages.length - 1].seq;
    more = page.more;
    // One message behind the reading: whether a message opens a turn depends on the one after it.
    for (const next of masterMessages(page.messages, head)) {
      if (cur && scan.take(cur, opensTurn([prev, cur, next]))) return scan.exchange();
      prev = cur;
      cur = next;
    }
  }
  // Stopped at the bound: the messages past it, which decide the last ones read, are not judged.
  if (bound < last) return null;
  if (cur && scan.take(cur, opensTurn([prev, cur, undefined]))) return scan.exchange();
  scan.endTurn();
  return scan.exchange();
}

/** Whether the middle one of three messages in a row (either neighbour may be missing) opens a turn. */
function opensTurn([prev, m, next]: [StoredMessage | undefined, StoredMessage, StoredMessage | undefined]): boolean {
  const around = [prev, m, next].filter((x): x is StoredMessage => x !== undefined);
  return startsTurn(around, prev ? 1 : 0);
}

/**
 * firstExchange is the one rule of what the exchange's prompt and reply are: a message is one when
 * firstExchange pairs it with a stand-in for the other.
 */
const STAND_IN = { id: "", seq: 0, createdAt: "" };
const REPLY_STAND_IN: StoredMessage = { ...STAND_IN, role: "assistant", content: [{ type: "text", text: "." }] };
const PROMPT_STAND_IN: StoredMessage = { ...STAND_IN, role: "user", content: [{ type: "text", text: "." }] };

/**
 * The first exchange's search, one message at a time in order. A refused turn is left out whole
 * unless an answer followed its refusal within it (core/replay-rules.ts refusedTurns), so a prompt
 * or reply counts once its turn is known kept: at the turn's end, or at the reply when no refusal
 * lies after it. A refused reply is never one.
 */
class KeptExchangeScan {
  private prompt: StoredMessage | null = null;
  /** The prompt's turn ended kept: a later refused turn no longer takes it. */
  private promptKept = false;
  private reply: StoredMessage | null = null;
  /** A refusal in the turn being read that no answer has followed (yet). */
  private unanswered = false;

  /** `refusalFrom(seq)`: whether a refused reply lies at `seq` or after it. */
  constructor(private readonly refusalFrom: (seq: number) => boolean) {}

  /** Takes the next message, which `opens` a turn or not; true once the exchange is known. */
  take(m: StoredMessage, opens: boolean): boolean {
    if (opens && this.endTurn()) return true;
    if (m.stopReason === "refusal") {
      this.unanswered = true;
      return false;
    }
    if (m.role === "assistant") this.unanswered = false;
    if (!this.prompt) {
      if (firstExchange([m, REPLY_STAND_IN])) this.prompt = m;
      return false;
    }
    if (this.reply || !firstExchange([PROMPT_STAND_IN, m])) return false;
    this.reply = m;
    // Nothing refused after it: its turn is kept, whatever follows.
    return !this.refusalFrom(m.seq + 1);
  }

  /** Ends the turn being read: a refusal left unanswered takes what it found. True once the exchange is known. */
  endTurn(): boolean {
    if (this.unanswered) {
      if (!this.promptKept) this.prompt = null;
      this.reply = null;
    } else this.promptKept = this.prompt !== null;
    this.unanswered = false;
    return this.exchange() !== null;
  }

  exchange(): { prompt: string; reply: string } | null {
    return this.prompt && this.reply ? firstExchange([this.prompt, this.reply]) : null;
  }
}

export class AutoTitler {
  constructor(
    private readonly scope: ObjectScope,
    private readonly record: ConversationRecord,
    private readonly outbox: IndexOutbox,
    /** Told the title once it is written (the object announces it on the conversation's sockets). */
    private readonly titled: (title: string) => void = () => {},
  ) {}

  /** Titles the conversation if it is due; resolves to the title written, or null. Never throws. */
  async afterTurn(client: Anthropic, model: ModelEntry): Promise<string | null> {
    const { store, deletion } = this.scope;
    try {
      const head = this.record.head;
      if (!head || deletion.deleted || !untitled(head.title) || store.titleSource() !== null) return null;
      // What a replay keeps, between turns (the turn has ended).
      const exchange = firstKeptExchange(store, { head });
      if (!exchange) return null;
      store.setTitleSource("auto");
      // Well-formed as every turn call goes out (agent/model-call.ts): a stored prompt may hold a lone
      // surrogate, a 400 that would leave the conversation untitled for good.
      const reply = await client.messages.create(
        wellFormedDeep(buildTitleRequest(model, exchange)) as unknown as Anthropic.MessageCreateParamsNonStreaming,
        { timeout: TITLE_CALL_TIMEOUT_MS, maxRetries: 1 },
      );
      this.outbox.meter(
        `title:${head.id}`,
        {
          tenantId: head.tenantId,
          conversationId: head.id,
          model: model.id,
          usage: billedUsage(reply, model),
        },
        "title",
      );
      // Only a finished answer is a title: a refusal's words are none, nor is an answer cut off
      // (max_tokens, model_context_window_exceeded: it would end mid-word). The title stays unset.
      const finished = reply.stop_reason === "end_turn" || reply.stop_reason === "stop_sequence";
      const title = finished ? cleanTitle(reply.content.map((b) => (b.type === "text" ? b.text : "")).join("")) : "";
      // Checked again in the serialized head writes: a rename that landed during the call wins.
      const applied =
        !!title &&
        (await this.record.updateHead((h) =>
          untitled(h.title) && store.titleSource() !== "user"
            ? { next: { ...h, title }, result: true }
            : { next: null, result: false },
        ));
      if (applied) this.titled(title);
      // The listing row and the call's usage row, in one run.
      await this.outbox.pending();
      return applied ? title : null;
    } catch (err) {
      if (!(err instanceof ConversationGone)) console.warn("automatic title failed; the title stays unset", err);
      return null;
    }
  }
}
