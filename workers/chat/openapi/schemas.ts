// Response and stream shapes for the document, declared with zod like the request schemas. They
// name the fields clients rely on and leave the rest open (looseObject): the full field lists are
// in API.md and docs/api-notes.md.
import { z } from "zod";
import { OBJECT_SCHEMA_DOC } from "../../../core/client-tools";
import { EFFORT_LEVELS, SERVER_TOOL_NAMES } from "../../../core/models/catalog";

export const errorSchema = z
  .strictObject({
    error: z.looseObject({
      type: z.string().meta({ description: "machine-readable, e.g. invalid_request, not_found, rate_limited" }),
      message: z.string().meta({ description: "names the field or the problem" }),
    }),
  })
  .meta({ id: "Error", description: "The one error shape of every 4xx and 5xx answer." });

/** core/types.ts Usage: tokens, server tool calls and, when the model is priced, the cost. */
const usage = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
  cache_read_input_tokens: z.number(),
  thinking_tokens: z.number().optional(),
  web_search_requests: z.number().optional(),
  web_fetch_requests: z.number().optional(),
  cost_usd: z
    .number()
    .optional()
    .meta({ description: "USD at the catalog's prices; absent when the model is not priced" }),
});
export const storedMessageSchema = z
  .looseObject({
    id: z.string(),
    seq: z.number().int(),
    role: z.enum(["user", "assistant"]),
    content: z.array(z.looseObject({ type: z.string() })),
    createdAt: z.string(),
    usage: usage.optional(),
    model: z.string().optional(),
    stopReason: z.string().nullable().optional(),
    superseded: z.literal(true).optional().meta({
      description: "In the transcript: a regenerate replaced this message's exchange; it is kept but never replayed.",
    }),
    supersededBy: z
      .string()
      .optional()
      .meta({ description: "The id of the user message of the exchange that replaced it." }),
  })
  .meta({ id: "Message", description: "A saved message; `seq` is the resume cursor." });

const agent = z.strictObject({ segment: z.string(), name: z.string() }).optional();
const event = <T extends z.ZodRawShape>(type: string, shape: T) =>
  z.looseObject({ type: z.literal(type), agent, ...shape });
const timing = z.strictObject({ serverMs: z.number(), modelMs: z.number(), queuedMs: z.number() });

const pendingCall = z.strictObject({ id: z.string(), name: z.string(), input: z.unknown() });
/** agent/model-errors.ts ModelFailure.overflow: sent in the SSE `error` event and the JSON answer alike. */
const overflowFigures = z
  .strictObject({
    promptTokens: z.number().int().meta({ description: "The prompt's tokens, as the provider counted them" }),
    maxTokens: z.number().int().meta({ description: "The model's real maximum, as the provider stated it" }),
  })
  .optional()
  .meta({
    description:
      'A context_overflow whose provider named its figures ("N tokens > M maximum"): what it counted and its real maximum',
  });

/** The client tool calls a paused turn waits on: a turn's `requires_action`, a conversation's `requiresAction`. */
const pendingCalls = z.strictObject({ turnId: z.string(), calls: z.array(pendingCall), expiresAt: z.string() });

// Shared by the event and its timeline card (the card is the event as it was streamed).
const modelChangedEvent = event("model_changed", {
  turnId: z.string(),
  from: z.string(),
  to: z.string(),
  reason: z.enum(["retired", "refusal_fallback"]),
  retiredOn: z.string().optional(),
});

/** core/events.ts CompactionCard: what a finished compaction pass did (`compaction`, then `compaction_finished`). */
const compactionShape = {
  turnId: z.string(),
  forced: z.boolean(),
  targets: z.number().int().meta({ description: "How many blocks the pass cut (tool results, long texts, images)" }),
  tokensBefore: z.number(),
  tokensAfter: z.number(),
  tokensSaved: z.number(),
  durationMs: z.number().meta({ description: "How long the pass took" }),
  summarized: z.enum(["model", "fallback"]).meta({
    description:
      "Who wrote the turn state that stands in for what was cut: a model call, or the deterministic fallback (also when nothing was cut)",
  }),
  details: z
    .array(
      z.looseObject({
        index: z.number().int(),
        block: z.number().int(),
        kind: z.string(),
        before: z.number(),
        after: z.number(),
      }),
    )
    .meta({ description: "Each cut block: its message index and block index, its kind, its size before and after" }),
};
/** The `compaction` event; the timeline keeps the same card (the event as it was streamed). */
const compactionCard = event("compaction", compactionShape);

/** core/events.ts TurnEvent: the SSE event names and the websocket's server frames. */
export const turnEventSchema = z
  .discriminatedUnion("type", [
    event("turn_start", {
      turnId: z.string(),
      replayed: z.literal(true).optional(),
      // To a socket resuming with ?after= while the turn runs: what it streamed since its last saved message follows.
      resumed: z.literal(true).optional(),
    }),
    event("turn_queued", {
      turnId: z.string(),
      ahead: z.number().int(),
      // To a socket resuming with ?after= while the turn still waits (after the running turn's frames).
      resumed: z.literal(true).optional(),
    }),
    event("delta", { turnId: z.string(), text: z.string() }),
    event("thinking", {
      turnId: z.string(),
      block: z.number().int(),
      text: z.string(),
      redacted: z.literal(true).optional(),
    }),
    event("tool_use", { turnId: z.string(), id: z.string(), name: z.string(), input: z.unknown() }),
    event("tool_result", {
      turnId: z.string(),
      tool_use_id: z.string(),
      name: z.string(),
      is_error: z.boolean(),
      chars: z.number(),
      preview: z.string(),
    }),
    event("progress", { turnId: z.string(), message: z.string() }),
    event("message", { turnId: z.string(), message: storedMessageSchema }),
    event("compaction_started", {
      turnId: z.string(),
      tokens: z.number(),
      budgetTokens: z.number(),
      forced: z.boolean(),
    }),
    compactionCard,
    event("compaction_finished", compactionShape),
    event("turn_end", {
      turnId: z.string(),
      stop_reason: z.string(),
      usage,
      timing,
      // Where the turn's own D1 writes (its memory notes) reached, when it wrote any: a stream's
      // client sends it as x-d1-bookmark (a JSON answer's header covers it already).
      d1Bookmark: z.string().optional(),
    }),
    event("error", {
      // null on the websocket for a frame that started no turn (a malformed frame, a refused ping,
      // tool_results or stop frame, a revoked key).
      turnId: z.string().nullable().optional(),
      // The refused `send` frame's own `ref`, when it named one (websocket only).
      ref: z.string().optional(),
      error: z.looseObject({
        type: z.string(),
        message: z.string(),
        status: z.number().optional(),
        providerType: z
          .string()
          .optional()
          .meta({ description: "A model failure: the provider's error type, when it said" }),
        requestId: z.string().optional(),
        overflow: overflowFigures,
      }),
    }),
    event("refusal", {
      turnId: z.string(),
      model: z.string(),
      category: z.string().nullable(),
      explanation: z.string().nullable(),
      fallbackModel: z.string().optional(),
    }),
    modelChangedEvent,
    event("retry", {
      turnId: z.string(),
      attempt: z.number().int(),
      delayMs: z.number(),
      error: z.looseObject({ type: z.string(), message: z.string() }),
    }),
    event("requires_action", { turnId: z.string(), calls: z.array(pendingCall), expiresAt: z.string() }),
    event("exchange_superseded", {
      turnId: z.string(),
      fromSeq: z.number().int(),
      toSeq: z.number().int(),
      messageIds: z.array(z.string()),
      supersededBy: z.string(),
    }),
  ])
  .meta({
    id: "TurnEvent",
    description:
      "One event of a turn. Over SSE: `event: <type>` then `data: <this JSON>`; over the websocket: one frame.",
  });

/** durable-objects/conversation/conversation-store.ts TimelineCard, one per kind lifecycle-log.ts keeps. */
const timelineCard = <T extends z.ZodType>(type: string, card: T) =>
  z.looseObject({
    id: z.number().int().meta({ description: "The card's id: the list's cursor (`after`/`cursor`, `next`)" }),
    at: z.string().meta({ description: "When the card was made (ISO 8601)" }),
    afterSeq: z
      .number()
      .int()
      .meta({ description: "The conversation's last message seq when the card was made: it sits after that message" }),
    type: z.literal(type),
    card,
  });

/** GET /v1/conversations/:id/timeline: the cards History shows among the messages (never replayed). */
export const timelineCardSchema = z
  .discriminatedUnion("type", [
    timelineCard("compaction", compactionCard),
    timelineCard("model_changed", modelChangedEvent),
  ])
  .meta({
    id: "TimelineCard",
    description:
      "A card of the conversation's timeline: a compaction that cut something, or the turn's model changing; `card` is the event as it was streamed.",
  });

/** Frames only the websocket sends, besides the turn events. */
export const socketServerFrameSchema = z
  .union([
    turnEventSchema,
    z.strictObject({
      type: z.literal("resumed"),
      after: z.number(),
      through: z.number(),
      lastSeq: z.number(),
      more: z.boolean(),
      turnsInFlight: z.number(),
    }),
    z.strictObject({ type: z.literal("pong") }),
    // To the socket alone, for a `send` frame that named itself (`ref`): its turn was taken, under this turnId.
    z.strictObject({ type: z.literal("accepted"), ref: z.string(), turnId: z.string() }),
    // The answer to a `stop` frame, to the socket that sent it (as POST /stop answers).
    z.strictObject({ type: z.literal("stopped"), turnId: z.string().nullable(), stopped: z.boolean() }),
    // The conversation's title changed outside a turn: the automatic title (source auto) or a rename (user).
    z.strictObject({ type: z.literal("title_changed"), title: z.string(), source: z.enum(["auto", "user"]) }),
  ])
  .meta({ id: "SocketServerFrame", description: "A frame the server sends on /v1/conversations/{id}/ws (JSON text)." });

export const turnResultSchema = z
  .looseObject({
    conversationId: z.string(),
    turnId: z.string().nullable(),
    messages: z.array(storedMessageSchema),
    stop_reason: z.string(),
    usage: usage.nullable(),
    requires_action: pendingCalls.optional().meta({
      description:
        'With stop_reason "requires_action": the client tool calls the turn waits on; post their results to /tool-results.',
    }),
    superseded: z
      .strictObject({
        fromSeq: z.number().int(),
        toSeq: z.number().int(),
        messageIds: z.array(z.string()),
        supersededBy: z.string(),
      })
      .optional()
      .meta({
        description:
          "A regenerate: the exchange it replaced (kept in the transcript, marked superseded, never replayed).",
      }),
    refusal: z
      .strictObject({
        model: z.string(),
        category: z.string().nullable(),
        explanation: z.string().nullable(),
        fallbackModel: z.string().optional(),
      })
      .optional()
      .meta({ description: 'With stop_reason "refusal": the model that declined, its category and explanation.' }),
    model_changes: z
      .array(
        z.strictObject({
          from: z.string(),
          to: z.string(),
          reason: z.enum(["retired", "refusal_fallback"]),
          retiredOn: z.string().optional(),
        }),
      )
      .optional()
      .meta({
        description:
          "The turn ran on another model than the settings named (a retired model's replacement, a refusal's fallback).",
      }),
  })
  .meta({
    id: "TurnResult",
    description: "A finished or paused turn (the JSON answer, without Accept: text/event-stream).",
  });

/** workers/chat/turn-response.ts turnJson on a turn that ended in an error: the turn as far as it went, and the error. */
export const turnErrorResultSchema = turnResultSchema
  .extend({
    error: z.looseObject({
      type: z.string(),
      message: z.string(),
      status: z.number().int().optional().meta({ description: "The upstream status, when the error had one" }),
      providerType: z.string().optional().meta({
        description: "A model failure: the provider's error type (api_error, overloaded_error, …), when it said",
      }),
      requestId: z
        .string()
        .optional()
        .meta({ description: "A model failure: the provider's request id (support asks for it), when it answered" }),
      overflow: overflowFigures,
    }),
  })
  .meta({
    id: "TurnErrorResult",
    description:
      "A turn that ended in an error (a JSON answer with a 4xx/5xx status): what it saved, and `error` naming why.",
  });

const nullableString = z.string().nullable();
/**
 * The fields each resource's routes answer (API.md and docs/api-notes.md): every one always sent
 * unless optional. Read off the routes' answers (services/… rows without their tenantId).
 */
const RESOURCE_FIELDS: Record<string, z.ZodRawShape> = {
  Attachment: {
    conversationId: z.string(),
    name: z.string(),
    type: z.string().meta({ description: "The media type, as detected from the bytes" }),
    size: z.number().int(),
    status: z.string(),
    facts: z.looseObject({ kind: z.string() }),
    createdAt: z.string(),
    note: z.string().meta({ description: "The reference note the conversation got" }),
    indexStatus: z.string().optional().meta({ description: "GET of one attachment" }),
    pagesIndexed: z.number().int().optional().meta({ description: "GET of one PDF attachment" }),
  },
  Automation: {
    name: z.string(),
    schedule: z.string(),
    prompt: z.string(),
    channel: z.string(),
    paused: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
    expiresAt: nullableString.meta({
      description:
        "The expiry of the key that created the automation or last changed its prompt or schedule: no slot past it runs. null: that key never expires",
    }),
  },
  AutomationRun: {
    automationId: z.string(),
    slot: z.string().meta({ description: "The scheduled minute the run is for (ISO); one run per slot" }),
    status: z.enum(["queued", "running", "retrying", "succeeded", "failed", "skipped"]),
    attempts: z.number().int(),
    conversationId: nullableString,
    queuedAt: z.string(),
    startedAt: nullableString,
    finishedAt: nullableString,
    usage: usage.nullable(),
    error: nullableString,
    stopReason: nullableString.meta({
      description:
        "The stop_reason of the turn whose outcome the run recorded (end_turn, interrupted, refusal, …); null when no turn ended",
    }),
    prompt: nullableString.meta({
      description:
        "The prompt the run sends, fixed by its first attempt (every retry sends it, whatever edits follow); null before that",
    }),
  },
  ConversationListItem: {
    title: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
    messageCount: z.number().int(),
  },
  Episode: {
    conversationId: z.string(),
    foldJobId: z.string(),
    day: z.string(),
    throughSeq: z.number().int(),
    body: z.string(),
    createdAt: z.string(),
  },
  Note: {
    title: z.string(),
    text: z.string(),
    tags: z.array(z.string()),
    sourceConversationId: nullableString,
    createdAt: z.string(),
    updatedAt: z.string(),
  },
  Project: {
    name: z.string(),
    settings: z.looseObject({}).meta({ description: "The settings patch its new conversations start with" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  },
  Tool: {
    kind: z.enum(["http", "client"]),
    name: z.string(),
    description: z.string(),
    inputSchema: z.record(z.string(), z.unknown()).meta(OBJECT_SCHEMA_DOC),
    projectId: nullableString,
    createdAt: z.string(),
    updatedAt: z.string(),
    endpoint: nullableString.optional().meta({ description: "http tools" }),
    headers: z.array(z.string()).optional().meta({ description: "http tools: the header names (never values)" }),
    timeoutMs: z.number().int().optional().meta({ description: "http tools" }),
    maxResponseBytes: z.number().int().optional().meta({ description: "http tools" }),
    idempotent: z.boolean().optional().meta({ description: "http tools" }),
    retries: z.number().int().optional().meta({ description: "http tools" }),
  },
};

/** A resource: its id and the fields its routes answer (RESOURCE_FIELDS), open to more. */
export const resource = (id: string, description: string) =>
  z.looseObject({ id: z.string(), ...(RESOURCE_FIELDS[id] ?? {}) }).meta({ id, description });

/** A page of a list: the items under `data` and `next`, the cursor of the following page (null at the end). */
export const listOf = (item: z.ZodType) =>
  z.looseObject({ data: z.array(item), next: z.union([z.string(), z.number(), z.null()]) });

/** A hit of GET /v1/search (services/cortex/search-index.ts SearchHit, its snippet as shown). */
export const searchHitSchema = z
  .looseObject({
    kind: z.enum(["message", "memory", "episode", "page"]),
    id: z.string(),
    conversationId: z.string().nullable(),
    messageId: z.string().nullable(),
    seq: z.number().int().nullable(),
    role: z.string().nullable(),
    from: z.enum(["person", "assistant", "tool"]).nullable().meta({
      description:
        "Whose words a message hit holds: `person`, `assistant`, or `tool` (no person typed them: a user message that carries tool results, or a sub-agent's task; `role` still says `user`, as the transcript does). Null for a note, episode or page.",
    }),
    createdAt: z.string(),
    snippet: z.string(),
    matches: z
      .array(z.array(z.number().int()))
      .meta({ description: "`[start, end]` of each `[match]` in `snippet` (UTF-16 offsets, brackets included)" }),
    score: z.number(),
    superseded: z.literal(true).optional().meta({
      description:
        "A message a regenerate replaced (as the transcript marks it): kept and still found, but not the reply that stands.",
    }),
    supersededBy: z
      .string()
      .optional()
      .meta({ description: "With `superseded`: the id of the user message of the exchange that replaced it." }),
  })
  .meta({ id: "SearchHit", description: "One search hit; `messageId` is set for messages." });

/** GET /v1/conversations/:id/replay: the model request the next turn starts from, and what it weighs. */
export const replaySchema = z
  .looseObject({
    model: z.string(),
    max_tokens: z.number().int(),
    system: z.array(z.looseObject({ type: z.literal("text"), text: z.string() })),
    tools: z.array(z.looseObject({ name: z.string() })),
    messages: z.array(
      z.looseObject({
        role: z.enum(["user", "assistant"]),
        content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
      }),
    ),
    estimate: z.looseObject({
      chars: z.number(),
      prefixChars: z.number(),
      messageChars: z.number(),
      tokens: z.number(),
      budgetTokens: z.number(),
      charsPerToken: z.number(),
      messages: z.number(),
      stubbedResults: z.number(),
      stubSavedChars: z.number(),
      stubPendingChars: z.number(),
    }),
  })
  .meta({
    id: "Replay",
    description:
      "What the model sees next: the system prompt, the tool schemas and the messages (summary preamble, stubs, verbatim tail), with the size estimate.",
  });

/** A conversation as the API answers it (GET /v1/conversations/:id). */
export const conversationSchema = z
  .looseObject({
    id: z.string(),
    title: z.string(),
    settings: z.looseObject({}),
    createdAt: z.string(),
    updatedAt: z.string(),
    summary: z
      .string()
      .nullable()
      .meta({ description: "The rolling summary of everything before summarizedThroughMessageId (null until a fold)" }),
    summarizedThroughMessage: z.number().int().nullable(),
    summarizedThroughMessageId: z.string().nullable(),
    stubbedThroughMessage: z.number().int().optional().meta({
      description:
        "Set by a fold's commit: tool results at or below this seq stay stubbed in every later request (a fold never un-stubs one)",
    }),
    foldCount: z.number().int(),
    lastFoldAt: z.string().nullable(),
    activeTools: z.array(z.string()),
    projectId: z.string().nullable(),
    importedThroughMessage: z.number().int().optional().meta({
      description:
        "Set on a conversation created by an import: the seq of the transcript's last message. Those messages go back to the model as their words, without thinking, server tool blocks or citations (the record keeps them).",
    }),
    superseded: z
      .array(z.strictObject({ fromSeq: z.number().int(), toSeq: z.number().int(), by: z.string() }))
      .optional()
      .meta({
        description:
          "The exchanges regenerates replaced (absent until the first): messages `fromSeq`..`toSeq` stay in the transcript but are never replayed or folded; `by` is the id of the user message of the exchange that replaced them.",
      }),
    messageCount: z.number().int(),
    lastSeq: z.number().int(),
    unsummarizedChars: z.number(),
    foldableChars: z.number(),
    foldInFlight: z.boolean(),
    requiresAction: pendingCalls.optional().meta({
      description:
        "While a turn waits on client tools (GET and PATCH answers): the calls it waits on; post their results to /tool-results.",
    }),
  })
  .meta({
    id: "Conversation",
    description: "A conversation: title, settings, the rolling summary's fields, counts and dates.",
  });

/** A conversation as a list names it (GET /v1/conversations). */
export const conversationListItemSchema = resource(
  "ConversationListItem",
  "A conversation of a list: its id, title and dates.",
);

/** A model of the catalog (GET /v1/models). */
export const modelSchema = z
  .looseObject({
    id: z.string(),
    aliases: z.array(z.string()).meta({ description: "Other ids that name the same model (dated snapshots)" }),
    name: z.string(),
    line: z
      .enum(["haiku", "sonnet", "opus", "fable", "mythos"])
      .nullable()
      .meta({ description: "The model's family; null on a retired model, or when the Models API names none" }),
    default: z.boolean().meta({ description: "The model new conversations get (the list's `defaultModel`)" }),
    status: z.enum(["active", "legacy", "deprecated", "retired"]),
    deprecatedOn: z
      .string()
      .nullable()
      .optional()
      .meta({ description: "The day (YYYY-MM-DD) it was deprecated, or null; absent on a retired model" }),
    retiresOn: z.string().nullable().optional().meta({
      description:
        "The scheduled retirement (YYYY-MM-DD), or null; from that day on the model is shown retired. Absent on a retired model",
    }),
    retiredOn: z.string().optional().meta({ description: "A retired model: the day (YYYY-MM-DD) it retired" }),
    replacement: z
      .string()
      .nullable()
      .meta({ description: "The model Anthropic recommends instead (legacy, deprecated and retired models), or null" }),
    contextWindowTokens: z.number().int().nullable().meta({ description: "null on a retired model" }),
    maxOutputTokens: z.number().int().nullable().meta({ description: "null on a retired model" }),
    thinking: z
      .strictObject({
        modes: z.array(z.enum(["adaptive", "enabled", "disabled", "between_tools"])).meta({
          description: "The `thinking.type` values the model accepts; any other is refused",
        }),
        default: z.enum(["adaptive", "off"]).meta({ description: "What a request without `thinking` does" }),
        display: z
          .enum(["summarized", "omitted"])
          .meta({ description: "`thinking.display` when the request does not set it" }),
        betweenToolCallsInThinking: z.boolean().meta({
          description: "Notes between tool calls come back as thinking blocks, not text",
        }),
      })
      .optional()
      .meta({ description: "How the model thinks; absent on a retired model" }),
    effort: z
      .strictObject({
        levels: z.array(z.enum(EFFORT_LEVELS)).meta({ description: "The `effort` values the model accepts" }),
        default: z.enum(EFFORT_LEVELS).meta({ description: "The effort of a request that sets none" }),
      })
      .nullable()
      .optional()
      .meta({ description: "null: the model takes no effort setting; absent on a retired model" }),
    prefill: z
      .boolean()
      .optional()
      .meta({ description: "A final assistant message (prefill) is accepted; absent on a retired model" }),
    samplingParameters: z.boolean().optional().meta({
      description:
        "`temperature` / `top_p` / `top_k` are accepted (never under the API version the SDK sends); absent on a retired model",
    }),
    forcedToolChoice: z
      .boolean()
      .optional()
      .meta({ description: "A `tool_choice` of type `any` or `tool` is accepted; absent on a retired model" }),
    tokenizerRatio: z.number().optional().meta({
      description:
        "Tokens this model makes of a text, against the Claude 4 tokenizer's count; absent on a retired model",
    }),
    minCacheTokens: z
      .number()
      .int()
      .optional()
      .meta({ description: "Prompts shorter than this are not cached; absent on a retired model" }),
    maxImagesPerRequest: z
      .number()
      .int()
      .optional()
      .meta({ description: "Images one request may carry; absent on a retired model" }),
    serverTools: z
      .boolean()
      .optional()
      .meta({ description: "The model offers server tools (any of `serverToolNames`); absent on a retired model" }),
    serverToolNames: z
      .array(z.enum(SERVER_TOOL_NAMES))
      .optional()
      .meta({ description: "The server tools the model offers; absent on a retired model" }),
    catalog: z.literal(false).optional().meta({
      description:
        "GET /v1/models/{id} of a model the catalog does not list but Anthropic's Models API knows: shown with the conservative limits a conversation would run it with",
    }),
    prices: z
      .strictObject({
        currency: z.literal("USD"),
        per: z.literal("million tokens"),
        input: z.number(),
        output: z.number(),
        cacheWrite5m: z.number(),
        cacheWrite1h: z.number(),
        cacheRead: z.number(),
        longPrompt: z.strictObject({ overPromptTokens: z.number().int(), multiplier: z.number() }).optional().meta({
          description: "A call whose prompt is over `overPromptTokens` costs `multiplier` times these prices",
        }),
      })
      .nullable()
      .meta({
        description: "USD per million tokens; null when the catalog has none for it (retired models among them)",
      }),
    sources: z.array(z.string()).meta({ description: "The pages each fact comes from" }),
  })
  .meta({
    id: "Model",
    description:
      "A Claude model as the catalog knows it: lifecycle, limits, thinking, effort, request rules and prices (USD per million tokens), each fact from its sources.",
  });

/** GET /v1/models: the catalog in one page, and the model a conversation gets when its settings name none. */
export const modelListSchema = listOf(modelSchema).extend({
  defaultModel: z.string().meta({
    description:
      "The model new conversations get: DEFAULT_MODEL when it resolves (its replacement once retired), else the catalog's default",
  }),
});
