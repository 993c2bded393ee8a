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
import { withoutRefusedTurns } from "../../core/replay-rules";
import { wellFormedDeep } from "../../core/text-cut";
import { buildTitleRequest, cleanTitle, firstExchange, untitled } from "../../core/title";
import { ConversationGone } from "./conversation-delete";
import type { IndexOutbox } from "./index-outbox";
import type { ObjectScope } from "./object-scope";
import type { ConversationRecord } from "./record";
import { masterMessages } from "./regenerate";

/** The title call's bound: it is a few tokens, and nothing waits on it. */
export const TITLE_CALL_TIMEOUT_MS = 30_000;
/** The first exchange is looked for among the first messages only. */
const FIRST_MESSAGES = 40;

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
      // What a replay keeps of the first messages, between turns (the turn has ended).
      const first = masterMessages(store.range(1, Math.min(store.lastSeq(), FIRST_MESSAGES)), head);
      const exchange = firstExchange(withoutRefusedTurns(first, true));
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
