// The automatic title's request never carries a lone surrogate (ARCHITECTURE.md: no request does):
// its excerpts are cut whole, and the call goes out well-formed even when the stored first prompt
// holds half a pair. A 400 there would leave the conversation untitled for good (tried once).
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { catalogEntry } from "../../core/models/lookup";
import { buildTitleRequest, DEFAULT_TITLE } from "../../core/title";
import type { ConversationHead } from "../../services/record/conversation-head";
import type { StoredMessage } from "../../core/types";
import { AutoTitler } from "../../durable-objects/conversation/auto-title";
import type { IndexOutbox } from "../../durable-objects/conversation/index-outbox";
import type { ObjectScope } from "../../durable-objects/conversation/object-scope";
import type { ConversationRecord, HeadChange } from "../../durable-objects/conversation/record";
import { makeClient, type Params, textOf } from "./offline-model-client";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

beforeEach(() => resetOfflineCache());

describe("the title request and lone surrogates", () => {
  it("cuts a long first prompt without splitting a surrogate pair, and the API accepts it", async () => {
    const request = buildTitleRequest(SONNET, { prompt: `${"a".repeat(1999)}😀 and more`, reply: "Sure." });
    expect(JSON.stringify(request.messages).includes("\\ud83d")).toBe(false);
    for (const m of request.messages)
      for (const b of m.content)
        if (typeof b !== "string" && b.type === "text") expect(b.text.isWellFormed()).toBe(true);
    const reply = await makeClient().messages.create(request as unknown as Params);
    expect(textOf(reply)).not.toBe("");
  }, 30_000);

  it("a stored first prompt holding half a pair still gets its title", async () => {
    const at = "2026-01-01T00:00:00Z";
    const messages: StoredMessage[] = [
      { id: "m1", seq: 1, role: "user", createdAt: at, content: [{ type: "text", text: "Tide \ud83d tables today" }] },
      { id: "m2", seq: 2, role: "assistant", createdAt: at, content: [{ type: "text", text: "Sure." }] },
    ];
    let head = { id: "conv_1", tenantId: "ten_1", title: DEFAULT_TITLE } as unknown as ConversationHead;
    let source: string | null = null;
    const scope = {
      deletion: { deleted: false },
      store: {
        titleSource: () => source,
        setTitleSource: (s: string) => {
          source = s;
        },
        lastSeq: () => messages.length,
        transcriptPage: (after: number, { limit }: { limit: number }) => ({
          messages: messages.filter((m) => m.seq > after).slice(0, limit),
          more: messages.filter((m) => m.seq > after).length > limit,
        }),
        refusalBetween: () => false,
      },
    } as unknown as ObjectScope;
    const record = {
      get head() {
        return head;
      },
      updateHead: async <T>(change: HeadChange<T>) => {
        const { next, result } = change(head);
        if (next) head = next;
        return result;
      },
    } as unknown as ConversationRecord;
    const outbox = { meter: () => {}, pending: async () => {} } as unknown as IndexOutbox;
    const title = await new AutoTitler(scope, record, outbox).afterTurn(makeClient(), SONNET);
    expect(title).not.toBeNull();
    expect(head.title).toBe(title);
  }, 30_000);
});
