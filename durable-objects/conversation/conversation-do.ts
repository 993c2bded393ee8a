// ConversationDO: one per conversation, the single writer. It serializes turns in arrival order,
// appends messages (R2 first, then its SQLite index), builds every model request through
// core/replay, hosts the conversation's websockets and indexes new messages into the cortex.
//
// Invariants enforced here:
// - seq is contiguous and assigned only inside the turn chain (or a rebuild), never concurrently;
// - a message is visible in the index only after its R2 batch exists;
// - every entry point checks the caller's tenant against the head: another tenant sees nothing;
// - per-turn work reads only the hot replay cache, never the whole transcript from storage.
import type Anthropic from "@anthropic-ai/sdk";
import { DurableObject } from "cloudflare:workers";
import { chooseFoldMark } from "../../core/fold";
import { buildModelRequest, estimateRequest } from "../../core/replay";
import type { TurnEvent } from "../../core/events";
import { sortableId } from "../../core/ids";
import { EXTRACT_CHUNK_PAGES, type ExtractJob, type FoldJob } from "../../core/jobs";
import { createModelClient } from "../../core/model-client";
import { ModelNotConfiguredError, modelProblem, MODEL_NOT_CONFIGURED } from "../../core/model-provider";
import { messageChars } from "../../core/render";
import { crossCheckSettings, mergeSettings, type SettingsPatch } from "../../core/settings";
import { buildSystemPrompt } from "../../core/system-prompt";
import { isAgentSegment, type ContentBlock, type ModelRequest, type NewMessage, type StoredMessage, type SystemBlock } from "../../core/types";
import type { BlockOrigin } from "../../core/compactor";
import { runSubAgent } from "../../agent/sub-agent";
import { blockOrigins, TurnCompactor } from "../../agent/turn-compaction";
import { runAgentTurn } from "../../agent/turn-loop";
import { conversationOfMessage, countIndexedPages, indexMessages, searchCortex } from "../../services/cortex";
import { createNote, deleteNote, getEpisode, getNote, recordEpisode, updateNote } from "../../services/memory/notes";
import { memoryMapFor, utcDay } from "../../services/memory/memory-map";
import { listConversationRows, updateConversationRow } from "../../services/conversation-list";
import { logCorpusEvent } from "../../services/corpus";
import { rateLimitMessage, takeRateLimit } from "../rate-limiter-client";
import { keyForHash } from "../../services/keys/auth";
import { promptSnapshotKey } from "../../r2-layout";
import { lineIndexFor } from "../../services/attachments/inspect";
import { r2RangeReader } from "../../services/attachments/r2-range-reader";
import { getAttachmentRow, toAttachment } from "../../services/attachments/store";
import { getProject, projectFiles, projectFilesBlock, PROMPT_PROJECT_FILES, projectTools as projectToolsFor } from "../../services/projects";
import { toolRegistry } from "../../agent/tools";
import type { ReadQuery, ToolContext } from "../../agent/tools/registry";
import type { ConversationHead, ConversationRef, ConversationView } from "../../services/record/conversation-head";
import { readBatchesAfter, readHead, writeBatch, writeHead } from "../../services/record/conversation-record";
import { ConversationDeletion, ConversationGone } from "./conversation-delete";
import { ConversationStore, type PromptSnapshot, type TimelineCard } from "./conversation-store";
import { parseClientFrame } from "./socket-frames";
import { IdempotencyLedger, keyedAnswer, type KeyedAnswer } from "./idempotency";
import { requestFingerprint } from "../../core/idempotency-key";
import { resolveTurnAttachments, unknownAttachmentMessage } from "../../services/attachments/turn-notes";

const INDEX_BATCH = 100;
const INDEX_RETRY_MS = 30_000;
/** A resuming socket gets at most this many messages; the rest is paged with GET /messages?after=. */
const RESUME_MAX_MESSAGES = 500;
/** How long a dispatched fold may run (queue retries included) before a later turn may dispatch again. */
export const FOLD_LEASE_MS = 10 * 60_000;
const encoder = new TextEncoder();

export interface TurnInput {
  content: ContentBlock[];
  /** Tools the turn's attached files need (their notes are already in `content`). */
  activate?: readonly string[];
  /** A retry with the same key gets the first turn's outcome instead of a second turn. */
  idempotencyKey?: string;
}

export interface ReplayView {
  model: string;
  max_tokens: number;
  system: ModelRequest["system"];
  tools: ModelRequest["tools"];
  messages: ModelRequest["messages"];
  estimate: ReturnType<typeof buildModelRequest>["estimate"];
}

/** What the summarizer needs to fold: the previous summary and the unsummarized region. */
export interface FoldSource {
  summary: string | null;
  summarizedThroughMessage: number;
  settings: ConversationHead["settings"];
  region: StoredMessage[];
}

export type FoldCommit =
  | { jobId: string; kind: "summary"; summary: string; boundaryMessageId: string; boundarySeq: number }
  /** The region had no place to cut (e.g. one monster turn): release the lease, change nothing. */
  | { jobId: string; kind: "nothing-to-fold" };

export interface FoldOutcome {
  applied: boolean;
  reason: string;
}

interface PromptContext {
  system: SystemBlock[];
  /** Tools the conversation's project files need, available without activation. */
  projectTools: string[];
}

interface SocketAttachment {
  tenantId: string;
  conversationId: string;
  /** The hashed API key that opened the socket: its turns count against that key's limits. */
  rateKey?: string;
}

export class ConversationDO extends DurableObject<Env> {
  private readonly store: ConversationStore;
  private readonly idempotency: IdempotencyLedger;
  /** Explicit deletion: the tombstone, the guard on writes that could bring data back, the purge. */
  private readonly deletion: ConversationDeletion;
  /** The loaded head; undefined until the first successful load. */
  private head: ConversationHead | undefined;
  private loading: Promise<ConversationHead | null> | null = null;
  /** Hot replay source: the messages a request replays, kept in memory across turns. */
  private history: StoredMessage[] | null = null;
  /** Replay chars after the fold boundary; null until computed. */
  private unsummarized: number | null = null;
  /** The tenant's memory map of the day (one D1 read per object per day). */
  private memoryMap: { day: string; text: string } | null = null;
  private turnChain: Promise<unknown> = Promise.resolve();
  /** Websocket frames waiting to be admitted as turns, in arrival order. */
  private frameChain: Promise<unknown> = Promise.resolve();
  /** Turns queued or running: a resuming socket is told whether more is still to come. */
  private turnsInFlight = 0;
  /** Per socket, the last seq its resume catch-up sent: live `message` frames never repeat one. */
  private readonly caughtUp = new WeakMap<WebSocket, number>();
  private indexing: Promise<void> | null = null;
  private indexAgain = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new ConversationStore(ctx.storage.sql);
    this.idempotency = new IdempotencyLedger(ctx.storage.sql);
    const ensureSchema = () => {
      this.store.ensureSchema();
      this.idempotency.ensureSchema();
    };
    ctx.blockConcurrencyWhile(async () => ensureSchema());
    this.deletion = new ConversationDeletion(ctx, {
      env: () => this.env,
      forget: () => {
        this.head = undefined;
        this.history = null;
        this.unsummarized = null;
      },
      ensureSchema,
    });
  }

  // ---- loading and rebuilding -------------------------------------------------------------

  /** The head if this conversation exists for this tenant; null otherwise (never another tenant's). */
  private async load(ref: ConversationRef): Promise<ConversationHead | null> {
    if (this.deletion.deleted) return null;
    if (!this.head) {
      // Callers share a load in flight. A failed lookup is never cached, and a caller whose
      // shared load found nothing (it ran with another caller's ref) tries with its own.
      this.loading ??= this.loadOnce(ref).finally(() => (this.loading = null));
      const found = (await this.loading) ?? (this.head ? null : await this.loadOnce(ref));
      if (found) this.head ??= found;
    }
    const head = this.head;
    if (!head || this.deletion.deleted || head.tenantId !== ref.tenantId || head.id !== ref.conversationId) return null;
    return head;
  }

  private async loadOnce(ref: ConversationRef): Promise<ConversationHead | null> {
    const local = normalizeHead(this.store.getHead());
    if (local) {
      // Keys come from the stored head, so this is safe whoever the caller is.
      await this.adoptBatchesFromR2(local);
      return local;
    }
    const head = normalizeHead(await readHead(this.env.BUCKET, ref.tenantId, ref.conversationId));
    if (!head) return null;
    await this.adoptBatchesFromR2(head);
    this.store.putHead(head);
    return head;
  }

  /**
   * Adopts R2 batches the index does not have: all of them after a storage loss, or the one a
   * crash left between the R2 write and the index write. One listing per cold start.
   */
  private async adoptBatchesFromR2(head: ConversationHead): Promise<void> {
    const last = this.store.lastSeq();
    for await (const batch of readBatchesAfter(this.env.BUCKET, head.tenantId, head.id, last)) {
      const fresh = batch.messages.filter((m) => m.seq > this.store.lastSeq());
      if (!fresh.length) continue;
      this.ctx.storage.transactionSync(() => this.store.insertMessages(fresh, batch.key, replayChars));
    }
    this.history = null;
    this.unsummarized = null;
  }

  /** The verbatim tail: every message after the fold boundary, cached across turns. */
  private replaySource(head: ConversationHead): StoredMessage[] {
    this.history ??= this.store.listAfter(head.summarizedThroughMessage ?? 0, Number.MAX_SAFE_INTEGER).filter((m) => !isAgentSegment(m));
    return this.history;
  }

  private unsummarizedChars(head: ConversationHead): number {
    this.unsummarized ??= this.store.charsAfter(head.summarizedThroughMessage ?? 0);
    return this.unsummarized;
  }

  /**
   * What a fold now would fold: the unsummarized chars before the fold mark (the kept tail is
   * not counted). Comparing this with the threshold makes each fold absorb more than
   * `foldThresholdChars` of conversation: one summarization call per threshold of growth.
   */
  private foldableChars(head: ConversationHead): number {
    const region = this.replaySource(head);
    const mark = chooseFoldMark(region, head.settings.tailMessages);
    if (mark === null) return 0;
    let kept = 0;
    for (let i = mark; i < region.length; i++) kept += messageChars(region[i]);
    return this.unsummarizedChars(head) - kept;
  }

  private view(head: ConversationHead): ConversationView {
    const { tenantId: _tenant, ...rest } = head;
    // seq runs 1..n without gaps, so the last seq is the count (an index lookup, not a scan).
    const lastSeq = this.store.lastSeq();
    const lease = this.store.getLease();
    return {
      ...rest,
      messageCount: lastSeq,
      lastSeq,
      unsummarizedChars: this.unsummarizedChars(head),
      foldableChars: this.foldableChars(head),
      foldInFlight: !!lease && lease.expiresAt > Date.now(),
    };
  }

  // ---- RPC: metadata ----------------------------------------------------------------------

  async create(ref: ConversationRef, init: { title: string; settings: ConversationHead["settings"]; projectId?: string | null }): Promise<ConversationView> {
    if (this.store.getHead() || (await readHead(this.env.BUCKET, ref.tenantId, ref.conversationId)))
      throw new Error(`conversation ${ref.conversationId} already exists`);
    const now = new Date().toISOString();
    const head: ConversationHead = {
      id: ref.conversationId,
      tenantId: ref.tenantId,
      title: init.title,
      settings: init.settings,
      createdAt: now,
      updatedAt: now,
      summary: null,
      summarizedThroughMessage: null,
      summarizedThroughMessageId: null,
      foldCount: 0,
      lastFoldAt: null,
      activeTools: [],
      projectId: init.projectId ?? null,
    };
    await writeHead(this.env.BUCKET, head);
    this.store.putHead(head);
    this.head = head;
    this.history = [];
    this.unsummarized = 0;
    return this.view(head);
  }

  async getMeta(ref: ConversationRef): Promise<ConversationView | null> {
    const head = await this.load(ref);
    return head ? this.view(head) : null;
  }

  async patch(ref: ConversationRef, change: { title?: string; settings?: SettingsPatch }): Promise<{ view: ConversationView } | { error: string } | null> {
    if (!(await this.load(ref))) return null;
    return this.updateHead<{ view: ConversationView } | { error: string }>((head) => {
      const settings = mergeSettings(head.settings, change.settings);
      const problem = crossCheckSettings(settings);
      if (problem) return { next: null, result: { error: problem } };
      const next: ConversationHead = { ...head, title: change.title ?? head.title, settings, updatedAt: new Date().toISOString() };
      return { next, result: { view: this.view(next) } };
    });
  }

  /**
   * Deletes the conversation and everything it owns (see conversation-delete.ts); false when there
   * is nothing of this tenant's to delete. A delete already under way is joined or resumed.
   */
  async delete(ref: ConversationRef): Promise<boolean> {
    const tomb = this.deletion.tombstone();
    const mine = tomb ? tomb.tenantId === ref.tenantId && tomb.conversationId === ref.conversationId : !!(await this.load(ref));
    if (!mine) return false;
    await this.deletion.delete(ref);
    return true;
  }

  /**
   * Head changes (patches, fold commits) run one at a time against the freshest head, so a
   * patch landing during a fold's R2 write is never overwritten by a stale copy. R2 first (the
   * record), then SQLite, then memory.
   */
  private headWrites: Promise<unknown> = Promise.resolve();
  private updateHead<T>(change: (head: ConversationHead) => { next: ConversationHead | null; result: T }): Promise<T> {
    const run = this.headWrites.then(async () => {
      if (this.deletion.deleted) throw new ConversationGone();
      const { next, result } = change(this.head!);
      if (next) {
        await this.deletion.guard(() => writeHead(this.env.BUCKET, next));
        this.store.putHead(next);
        this.head = next;
      }
      return result;
    });
    this.headWrites = run.catch(() => {});
    return run;
  }

  // ---- RPC: reading -----------------------------------------------------------------------

  async listMessages(ref: ConversationRef, after: number, limit: number): Promise<{ messages: StoredMessage[]; next: number | null } | null> {
    if (!(await this.load(ref))) return null;
    const messages = this.store.listAfter(after, limit + 1);
    const more = messages.length > limit;
    const page = more ? messages.slice(0, limit) : messages;
    return { messages: page, next: more ? page[page.length - 1].seq : null };
  }

  async readMessages(ref: ConversationRef, query: ReadQuery): Promise<{ messages: StoredMessage[]; messageCount: number } | null> {
    if (!(await this.load(ref))) return null;
    const messages = query.messageId
      ? [this.store.byId(query.messageId)].filter((m): m is StoredMessage => !!m)
      : this.store.range(query.fromSeq ?? 1, query.toSeq ?? (query.fromSeq ?? 1) + query.limit - 1).slice(0, query.limit);
    return { messages, messageCount: this.store.lastSeq() };
  }

  async replay(ref: ConversationRef): Promise<ReplayView | null> {
    const head = await this.load(ref);
    if (!head) return null;
    const { request, estimate } = this.buildRequest(head, await this.promptContext(head));
    return { ...request, estimate };
  }

  /**
   * The system prompt — byte-stable within a UTC day (the memory map changes at most daily) and
   * until a project file is added — and the tools the project's files need.
   */
  private async promptContext(head: ConversationHead): Promise<PromptContext> {
    let project: string | null = null;
    let projectTools: string[] = [];
    if (head.projectId) {
      const p = await getProject(this.env.DB, head.tenantId, head.projectId);
      if (p) {
        const listed = await projectFiles(this.env.DB, head.tenantId, p.id, PROMPT_PROJECT_FILES + 1);
        const files = listed.slice(0, PROMPT_PROJECT_FILES);
        project = projectFilesBlock(p, files, listed.length > files.length);
        projectTools = projectToolsFor(files);
      }
    }
    return { system: await this.systemPrompt(head, project), projectTools };
  }

  private async systemPrompt(head: ConversationHead, project: string | null): Promise<SystemBlock[]> {
    const day = utcDay();
    if (this.memoryMap?.day !== day) {
      try {
        this.memoryMap = { day, text: await memoryMapFor(this.env.DB, head.tenantId, day) };
      } catch (err) {
        // Without the map the turn still runs; the next request tries again.
        console.error("memory map unavailable", err);
      }
    }
    return buildSystemPrompt(toolRegistry.capabilities(), this.memoryMap?.day === day ? this.memoryMap.text : null, project);
  }

  private buildRequest(head: ConversationHead, prompt: PromptContext) {
    return buildModelRequest({
      conversationId: head.id,
      settings: head.settings,
      system: prompt.system,
      tools: toolRegistry.schemasFor([...head.activeTools, ...prompt.projectTools]),
      history: this.replaySource(head),
      summary:
        head.summary && head.summarizedThroughMessage
          ? { summary: head.summary, throughSeq: head.summarizedThroughMessage }
          : null,
    });
  }

  // ---- RPC: turns -------------------------------------------------------------------------

  /**
   * Queues a turn and returns its events as NDJSON. The turn runs to the end even if the caller
   * leaves. With an idempotency key already used, no turn runs: the first outcome or a refusal.
   */
  async send(ref: ConversationRef, input: TurnInput): Promise<ReadableStream<Uint8Array> | KeyedAnswer | null> {
    if (!(await this.load(ref))) return null;
    const refused = await this.claimKey(input);
    if (refused) return refused;
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const sink = (event: TurnEvent) => {
      writer.write(encoder.encode(JSON.stringify(event) + "\n")).catch(() => {});
    };
    this.enqueueTurn(ref, input, sink).finally(() => writer.close().catch(() => {}));
    return readable;
  }

  /** Null when the turn may run (no key, or a new one, now taken); else what to answer instead. */
  private async claimKey(input: TurnInput): Promise<KeyedAnswer | null> {
    const key = input.idempotencyKey;
    if (key === undefined) return null;
    // The content alone: attached files are already notes in it (`activate` follows from them).
    const claim = this.idempotency.claim(key, await requestFingerprint({ content: input.content }));
    return claim.kind === "new" ? null : keyedAnswer(claim, (from, to) => this.store.range(from, to));
  }

  /**
   * An attachment's reference note joins the conversation as a user message, in order with the
   * turns, and the tools that read its kind are activated (a lifecycle event, not a keyword).
   */
  async addAttachmentNote(ref: ConversationRef, note: string, tools: readonly string[]): Promise<StoredMessage | null> {
    if (!(await this.load(ref))) return null;
    const run = this.turnChain.then(async () => {
      const [message] = await this.append([{ role: "user", content: [{ type: "text", text: note }] }]);
      this.broadcast({ type: "message", turnId: "attachment", message });
      await this.activateTools(tools);
      this.ctx.waitUntil(this.indexPending());
      return message;
    });
    this.turnChain = run.catch(() => {});
    return run;
  }

  /**
   * History brought from elsewhere joins the transcript verbatim, in order with the turns, without
   * a model call: whole exchanges only (the route checks), so the next turn still alternates.
   */
  async importMessages(ref: ConversationRef, messages: readonly { role: "user" | "assistant"; text: string }[]): Promise<StoredMessage[] | null> {
    if (!(await this.load(ref))) return null;
    const run = this.turnChain.then(async () => {
      const stored = await this.append(messages.map((m) => ({ role: m.role, content: [{ type: "text" as const, text: m.text }] })));
      this.ctx.waitUntil(this.indexPending());
      this.ctx.waitUntil(this.maybeDispatchFold());
      return stored;
    });
    this.turnChain = run.catch(() => {});
    return run;
  }

  /** Attachments are lifecycle events that activate the tools for their kind (never a keyword). */
  private async activateTools(tools: readonly string[]): Promise<void> {
    const missing = tools.filter((t) => toolRegistry.get(t) && !this.head!.activeTools.includes(t));
    if (missing.length) await this.updateHead((h) => ({ next: { ...h, activeTools: [...new Set([...h.activeTools, ...missing])].sort(), updatedAt: new Date().toISOString() }, result: undefined }));
  }

  /** Turns run one at a time in arrival order: each waits for the previous one to settle. */
  private enqueueTurn(ref: ConversationRef, input: TurnInput, sink: ((e: TurnEvent) => void) | null, turnId = sortableId("turn")): Promise<void> {
    const queuedAt = Date.now();
    this.turnsInFlight++;
    const key = input.idempotencyKey;
    // A keyed turn's row follows its events, so a retry (or a restarted object) knows what it did.
    const events = key === undefined ? sink : (e: TurnEvent) => (this.idempotency.record(key, e), sink?.(e));
    const run = this.turnChain
      .then(() => this.runTurn(ref, input, events, queuedAt, turnId))
      .finally(() => {
        this.turnsInFlight--;
        if (key !== undefined) this.idempotency.settle(key);
      });
    this.turnChain = run.catch(() => {});
    this.ctx.waitUntil(this.turnChain);
    return run;
  }

  private async runTurn(ref: ConversationRef, input: TurnInput, sink: ((e: TurnEvent) => void) | null, queuedAt: number, turnId: string): Promise<void> {
    const started = Date.now();
    const emit = (event: TurnEvent) => {
      sink?.(event);
      this.broadcast(event);
      if (event.type === "compaction_started" || event.type === "compaction") this.ctx.waitUntil(this.logCompaction(ref, event));
      // The finished card stays in the conversation's timeline for History; it is never replayed.
      if (event.type === "compaction") this.store.addCard("compaction", event);
    };
    /** Ends a turn that the model never answered, naming why. */
    const endWithError = (error: { type: string; message: string; status?: number }) => {
      emit({ type: "error", turnId, error });
      emit({ type: "turn_end", turnId, stop_reason: "error", usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, timing: { serverMs: Date.now() - started, modelMs: 0, queuedMs: started - queuedAt } });
    };
    emit({ type: "turn_start", turnId });
    const head = await this.load(ref);
    if (!head) {
      emit({ type: "error", turnId, error: { type: "not_found", message: "conversation not found" } });
      return;
    }
    let client: Anthropic;
    try {
      client = createModelClient(this.env);
    } catch (err) {
      // No model to answer: refused before anything is saved, never answered by a stand-in.
      if (!(err instanceof ModelNotConfiguredError)) throw err;
      endWithError({ type: err.type, message: err.message, status: err.status });
      return;
    }
    let prompt: PromptContext;
    try {
      prompt = await this.promptContext(head);
    } catch (err) {
      // D1 unavailable before anything was saved: the turn is refused whole, and the caller told.
      console.error("turn refused: prompt context unavailable", err);
      endWithError({ type: "storage_error", message: "the turn could not start; nothing was saved; retry" });
      return;
    }
    if (input.activate?.length) await this.activateTools(input.activate);
    const self = this;
    const toolContext: ToolContext = {
      tenantId: ref.tenantId,
      conversationId: ref.conversationId,
      get activeTools() {
        return [...(self.head?.activeTools ?? []), ...prompt.projectTools];
      },
      activateTool: (name) =>
        this.updateHead((h) => ({ next: h.activeTools.includes(name) ? null : { ...h, activeTools: [...h.activeTools, name].sort(), updatedAt: new Date().toISOString() }, result: undefined })),
      listConversations: async (limit, before) => (await listConversationRows(this.env.DB, ref.tenantId, limit, before)).map(({ tenantId: _t, ...row }) => row),
      readConversation: (conversationId, query) =>
        conversationId === ref.conversationId
          ? this.readMessages(ref, query)
          : this.env.CONVERSATION.get(this.env.CONVERSATION.idFromName(conversationId)).readMessages({ tenantId: ref.tenantId, conversationId }, query),
      search: (query, limit, opts) => searchCortex(this.env.DB, ref.tenantId, query, { limit, ...opts }),
      progress: (message) => this.broadcast({ type: "progress", turnId, message }),
      pageIndex: {
        status: async (attachmentId) => {
          const row = await getAttachmentRow(this.env.DB, ref.tenantId, attachmentId);
          return { status: row?.indexStatus ?? "none", startedAt: row?.indexStartedAt ?? null, indexed: await countIndexedPages(this.env.DB, ref.tenantId, attachmentId) };
        },
        start: async (attachmentId, pageCount) => {
          await this.env.DB.prepare(`UPDATE attachments SET index_status = 'indexing', index_started_at = ? WHERE tenant_id = ? AND id = ?`).bind(new Date().toISOString(), ref.tenantId, attachmentId).run();
          const jobs: { body: ExtractJob }[] = [];
          for (let from = 1; from <= pageCount; from += EXTRACT_CHUNK_PAGES)
            jobs.push({ body: { kind: "extract", tenantId: ref.tenantId, attachmentId, fromPage: from, toPage: Math.min(pageCount, from + EXTRACT_CHUNK_PAGES - 1) } });
          for (let i = 0; i < jobs.length; i += 100) await this.env.FOLD_QUEUE.sendBatch(jobs.slice(i, i + 100));
        },
      },
      openAttachment: async (id) => {
        const row = await getAttachmentRow(this.env.DB, ref.tenantId, id);
        const reader = row?.status === "ready" ? await r2RangeReader(this.env.BUCKET, row.r2Key) : null;
        if (!row || !reader) return null;
        return { attachment: toAttachment(row), reader, lineIndex: () => lineIndexFor(this.env.BUCKET, row.tenantId, row.id, row.r2Key) };
      },
      memory: {
        getNote: (id) => getNote(this.env.DB, ref.tenantId, id),
        getEpisode: (id) => getEpisode(this.env.DB, ref.tenantId, id),
        conversationOfMessage: (id) => conversationOfMessage(this.env.DB, ref.tenantId, id),
        saveNote: (input) => createNote(this.env.DB, ref.tenantId, { ...input, sourceConversationId: ref.conversationId }),
        updateNote: (id, change) => updateNote(this.env.DB, ref.tenantId, id, change),
        deleteNote: (id) => deleteNote(this.env.DB, ref.tenantId, id),
      },
    };
    const persist = async (messages: NewMessage[]) => {
      const stored = await this.append(messages);
      for (const message of stored) emit({ type: "message", turnId, message });
      return stored;
    };
    const compactorFor = (originOf: () => (block: ContentBlock) => BlockOrigin | undefined) => new TurnCompactor(head.settings, client, head.settings.model, originOf);
    let outcome;
    try {
      outcome = await runAgentTurn(
        {
          turnId,
          client,
          registry: toolRegistry,
          toolContext,
          maxIterations: head.settings.maxToolIterations,
          contextWindowTokens: head.settings.contextWindowTokens,
          compactor: compactorFor(() => blockOrigins(head.id, this.replaySource(this.head ?? head))),
          buildRequest: () => this.buildRequest(this.head ?? head, prompt).request,
          onRequest: (request, step, reportedTokens, compacted) => this.snapshotPrompt(head, turnId, step, request, reportedTokens, compacted),
          persist,
          emit,
          // Workflow mode: the sub-agent runs this same loop with its own safety net.
          delegate: (task, parent) =>
            runSubAgent({ client, registry: toolRegistry, toolContext, contextWindowTokens: head.settings.contextWindowTokens, persist, compactor: compactorFor }, task, parent),
        },
        input.content,
      );
    } catch (err) {
      // Storage failed: whatever was appended before stays; the caller is told. Or the
      // conversation was deleted under the turn: nothing more of it is written.
      if (!(err instanceof ConversationGone)) console.error("turn failed", err);
      endWithError(err instanceof ConversationGone ? { type: "not_found", message: "conversation not found" } : { type: "storage_error", message: "the turn could not be saved; retry" });
      return;
    }
    if (outcome.failure) emit({ type: "error", turnId, error: outcome.failure });
    const serverMs = Date.now() - started - outcome.modelMs;
    emit({ type: "turn_end", turnId, stop_reason: outcome.stopReason, usage: outcome.usage, timing: { serverMs, modelMs: outcome.modelMs, queuedMs: started - queuedAt } });
    // Housekeeping after the response: never on the turn's critical path.
    this.ctx.waitUntil(this.indexPending());
    this.ctx.waitUntil(this.maybeDispatchFold());
  }

  /** Appends one batch: R2 first (the record), then the SQLite index, then the hot cache. */
  private async append(messages: NewMessage[]): Promise<StoredMessage[]> {
    if (this.deletion.deleted) throw new ConversationGone();
    const head = this.head!;
    const first = this.store.lastSeq() + 1;
    const createdAt = new Date().toISOString();
    const stored: StoredMessage[] = messages.map((m, i) => ({ id: sortableId("msg"), seq: first + i, role: m.role, content: m.content, createdAt, ...extras(m) }));
    const key = await this.deletion.guard(() => writeBatch(this.env.BUCKET, head, stored));
    try {
      this.ctx.storage.transactionSync(() => this.store.insertMessages(stored, key, replayChars));
    } catch (err) {
      // The batch is in R2 but not in the index: restart so the next load adopts it from R2
      // instead of handing out its seqs again.
      this.ctx.abort("index write failed after the R2 write");
      throw err;
    }
    this.history?.push(...stored.filter((m) => !isAgentSegment(m)));
    if (this.unsummarized !== null) for (const m of stored) this.unsummarized += replayChars(m);
    // A durable reminder to index these: if the object dies before the turn's indexing runs
    // (eviction, restart, a failed D1 call), the alarm brings it back to finish the job.
    void this.ctx.storage.setAlarm(Date.now() + INDEX_RETRY_MS);
    return stored;
  }

  // ---- observing the lifecycle --------------------------------------------------------------

  private async logCompaction(ref: ConversationRef, event: Extract<TurnEvent, { type: "compaction_started" | "compaction" }>): Promise<void> {
    const { type, turnId, ...fields } = event;
    const name = type === "compaction" ? "compaction.applied" : "compaction.started";
    const details = "details" in fields ? { ...fields, details: `${fields.details.length} targets` } : fields;
    await logCorpusEvent(this.env, ref.tenantId, name, { conversation: ref.conversationId, turn: turnId, ...details }).catch((err) => console.error("corpus log failed", err));
  }

  /** Each request's size against the budget (the newest 50, rotating); the body goes to R2. */
  private snapshotPrompt(head: ConversationHead, turnId: string, step: number, request: ModelRequest, reportedTokens: number | null, compacted: boolean): void {
    const estimate = estimateRequest(request, head.settings);
    const { id, dropped } = this.store.addSnapshot({
      at: new Date().toISOString(),
      turnId,
      step,
      messages: request.messages.length,
      chars: estimate.chars,
      estimateTokens: estimate.tokens,
      reportedTokens,
      budgetTokens: estimate.budgetTokens,
      compacted,
    });
    this.ctx.waitUntil(
      this.deletion
        .guard(async () => {
          await this.env.BUCKET.put(promptSnapshotKey(head.tenantId, head.id, id), JSON.stringify(request), { httpMetadata: { contentType: "application/json" } });
          if (dropped.length) await this.env.BUCKET.delete(dropped.map((d) => promptSnapshotKey(head.tenantId, head.id, d)));
        })
        .catch((err) => console.error("prompt snapshot write failed", err)),
    );
  }

  async timeline(ref: ConversationRef, after: number, limit: number): Promise<{ cards: TimelineCard[]; next: number | null } | null> {
    if (!(await this.load(ref))) return null;
    const cards = this.store.cards(after, limit + 1);
    const page = cards.slice(0, limit);
    return { cards: page, next: cards.length > limit ? page[page.length - 1].id : null };
  }

  /** Newest first; `before` is the id of the last snapshot of the previous page. */
  async promptSnapshots(ref: ConversationRef, limit: number, before?: number): Promise<PromptSnapshot[] | null> {
    if (!(await this.load(ref))) return null;
    return this.store.snapshots(limit, before);
  }

  // ---- the rolling summary --------------------------------------------------------------------

  /**
   * When a fold now would fold more than the threshold and none is in flight: take the lease and
   * send one fold job. The check and the lease are one synchronous step, so two turns never both
   * dispatch.
   */
  private async maybeDispatchFold(): Promise<void> {
    const head = this.head;
    // Zero when there is nowhere to cut: such a job would only burn a queue hop.
    if (!head || this.foldableChars(head) <= head.settings.foldThresholdChars) return;
    const now = Date.now();
    const lease = this.store.getLease();
    if (lease && lease.expiresAt > now) return;
    const job: FoldJob = { kind: "fold", jobId: sortableId("fold"), tenantId: head.tenantId, conversationId: head.id, requestedAt: new Date(now).toISOString() };
    this.store.putLease({ jobId: job.jobId, dispatchedAt: now, expiresAt: now + FOLD_LEASE_MS });
    try {
      await this.env.FOLD_QUEUE.send(job);
    } catch (err) {
      // Not sent: free the lease so the next turn tries again.
      console.error("fold dispatch failed", err);
      if (this.store.getLease()?.jobId === job.jobId) this.store.clearLease();
    }
  }

  /** The region a fold job works on; null when the job is not the fold in flight (stale or redelivered). */
  async foldSource(ref: ConversationRef, jobId: string): Promise<FoldSource | null> {
    const head = await this.load(ref);
    if (!head || this.store.getLease()?.jobId !== jobId) return null;
    const through = head.summarizedThroughMessage ?? 0;
    return { summary: head.summary, summarizedThroughMessage: through, settings: head.settings, region: this.store.listAfter(through, Number.MAX_SAFE_INTEGER).filter((m) => !isAgentSegment(m)) };
  }

  /**
   * Applies a fold against the freshest state: the job must hold the lease, the boundary message
   * must exist with the seq the job saw, and the boundary never moves backwards. Messages are never
   * touched: only the head's summary fields change, in R2 first, then here.
   */
  async commitFold(ref: ConversationRef, commit: FoldCommit): Promise<FoldOutcome> {
    if (!(await this.load(ref))) return { applied: false, reason: "conversation not found" };
    const outcome = await this.updateHead<FoldOutcome>((head) => {
      const reject = (reason: string) => {
        // A job that lost its lease must not free the lease of the fold that replaced it.
        if (this.store.getLease()?.jobId === commit.jobId) this.store.clearLease();
        return { next: null, result: { applied: false, reason } };
      };
      if (this.store.getLease()?.jobId !== commit.jobId) return { next: null, result: { applied: false, reason: "stale job: not the fold in flight" } };
      if (commit.kind === "nothing-to-fold") return reject("nothing to fold");
      const boundary = this.store.byId(commit.boundaryMessageId);
      if (!boundary || boundary.seq !== commit.boundarySeq) return reject("boundary message not found");
      if (commit.boundarySeq - 1 <= (head.summarizedThroughMessage ?? 0)) return reject("boundary would not move forward");
      if (commit.summary.length > head.settings.summaryMaxChars) return reject("summary over the size cap");
      const now = new Date().toISOString();
      const next: ConversationHead = {
        ...head,
        summary: commit.summary,
        summarizedThroughMessage: commit.boundarySeq - 1,
        summarizedThroughMessageId: commit.boundaryMessageId,
        foldCount: head.foldCount + 1,
        lastFoldAt: now,
        updatedAt: now,
      };
      return { next, result: { applied: true, reason: "folded" } };
    });
    if (outcome.applied) {
      if (this.store.getLease()?.jobId === commit.jobId) this.store.clearLease();
      const head = this.head!;
      // The fold's summary becomes a dated episode of this conversation, written to D1 by the indexer.
      this.store.putOutbox(`episode:${commit.jobId}`, { tenantId: head.tenantId, conversationId: head.id, foldJobId: commit.jobId, throughSeq: head.summarizedThroughMessage, summary: head.summary, at: head.lastFoldAt });
      this.ctx.waitUntil(this.indexPending());
      this.ctx.waitUntil(
        logCorpusEvent(this.env, head.tenantId, "fold.applied", { conversation: head.id, job: commit.jobId, through_seq: head.summarizedThroughMessage, summary_chars: head.summary?.length ?? 0, folds: head.foldCount }).catch(() => {}),
      );
      const boundarySeq = (commit as { boundarySeq: number }).boundarySeq;
      this.history = this.history?.filter((m) => m.seq >= boundarySeq) ?? null;
      this.unsummarized = null;
    }
    return outcome;
  }

  // ---- the cortex ---------------------------------------------------------------------------

  /** Indexes every message not yet in D1, then refreshes the listing row. Retries by alarm on failure. */
  private indexPending(): Promise<void> {
    if (this.indexing) {
      this.indexAgain = true;
      return this.indexing;
    }
    this.indexing = (async () => {
      if (this.deletion.deleted) return;
      const head = this.head ?? this.store.getHead();
      if (!head) return;
      do {
        this.indexAgain = false;
        for (;;) {
          const batch = this.store.listAfter(this.store.indexedThrough(), INDEX_BATCH);
          if (!batch.length) break;
          await this.deletion.guard(() => indexMessages(this.env.DB, head.tenantId, head.id, batch));
          this.store.setIndexedThrough(batch[batch.length - 1].seq);
        }
      } while (this.indexAgain);
      for (const item of this.store.outbox()) {
        if (item.key.startsWith("episode:")) await this.deletion.guard(() => recordEpisode(this.env.DB, item.payload as Parameters<typeof recordEpisode>[1]));
        this.store.deleteOutbox(item.key);
      }
      await this.deletion.guard(() => updateConversationRow(this.env.DB, head.id, { messageCount: this.store.lastSeq(), updatedAt: new Date().toISOString(), title: head.title }));
      // Caught up: the reminder append set is not needed (a later append sets it again).
      if (this.store.indexedThrough() >= this.store.lastSeq() && !this.store.outbox().length && !this.indexAgain) await this.ctx.storage.deleteAlarm();
    })()
      .catch(async (err) => {
        if (err instanceof ConversationGone) return;
        console.error("cortex indexing failed; retrying by alarm", err);
        await this.ctx.storage.setAlarm(Date.now() + INDEX_RETRY_MS);
      })
      .finally(() => (this.indexing = null));
    return this.indexing;
  }

  override async alarm(): Promise<void> {
    if (await this.deletion.resume()) return;
    await this.indexPending();
  }

  // ---- websockets -------------------------------------------------------------------------

  /** Only websocket upgrades arrive here, already authenticated by the chat worker. */
  override async fetch(request: Request): Promise<Response> {
    const tenantId = request.headers.get("x-tenant-id") ?? "";
    const conversationId = request.headers.get("x-conversation-id") ?? "";
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return new Response("expected a websocket upgrade", { status: 426 });
    if (!(await this.load({ tenantId, conversationId }))) return new Response("not found", { status: 404 });
    const pair = new WebSocketPair();
    const server = pair[1];
    this.ctx.acceptWebSocket(server);
    const rateKey = request.headers.get("x-rate-key") ?? undefined;
    server.serializeAttachment({ tenantId, conversationId, ...(rateKey ? { rateKey } : {}) } satisfies SocketAttachment);
    const after = new URL(request.url).searchParams.get("after");
    if (after !== null && /^\d{1,15}$/.test(after)) this.resume(server, Number(after));
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  /**
   * A reconnecting client's catch-up (`/ws?after=<last seq it saw>`): every saved message after
   * that seq as a `message` frame, then `resumed`. It runs synchronously right after the accept,
   * so no turn event interleaves, and live `message` frames skip what the catch-up already sent:
   * together, each message reaches the socket exactly once, in seq order.
   */
  private resume(ws: WebSocket, after: number): void {
    const messages = this.store.listAfter(after, RESUME_MAX_MESSAGES + 1);
    const more = messages.length > RESUME_MAX_MESSAGES;
    const page = more ? messages.slice(0, RESUME_MAX_MESSAGES) : messages;
    for (const message of page) ws.send(JSON.stringify({ type: "message", turnId: "resume", message } satisfies TurnEvent));
    const through = page.length ? page[page.length - 1].seq : after;
    this.caughtUp.set(ws, through);
    ws.send(JSON.stringify({ type: "resumed", after, through, lastSeq: this.store.lastSeq(), more, turnsInFlight: this.turnsInFlight }));
  }

  override async webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    const ref = ws.deserializeAttachment() as SocketAttachment;
    const frame = parseClientFrame(data);
    if (!frame.ok) {
      ws.send(JSON.stringify({ type: "error", error: { type: "invalid_request", message: frame.error } }));
      return;
    }
    if (frame.value.type === "ping") {
      ws.send(JSON.stringify({ type: "pong" }));
      return;
    }
    const { content, attachments, idempotencyKey } = frame.value;
    // A send frame is a turn from here on: a refusal names the turnId it would have had.
    const turnId = sortableId("turn");
    const refuse = (error: { type: string; message: string; retryAfterSeconds?: number; status?: number }, extra: Record<string, unknown> = {}) => ws.send(JSON.stringify({ type: "error", turnId, ...extra, error }));
    // Frames are admitted one at a time, so the awaits below (the head, the rate limiter) can
    // never let a later frame's turn overtake an earlier one's.
    const admit = this.frameChain.then(async () => {
      if (!(await this.load(ref))) return refuse({ type: "not_found", message: "conversation not found" });
      // Like the HTTP turn routes: no model, no turn (and no turn token spent on it).
      const problem = modelProblem(this.env);
      if (problem) return refuse({ type: MODEL_NOT_CONFIGURED, message: problem, status: 503 });
      if (ref.rateKey) {
        // A socket is worth no more than the key that opened it: once that key is revoked (seen
        // here within the auth cache's bound), frames are refused and the socket is closed.
        if ((await keyForHash(this.env, ref.rateKey))?.tenantId !== ref.tenantId) {
          refuse({ type: "authentication_error", message: "the API key that opened this socket is revoked or expired" });
          ws.close(1008, "key revoked");
          return;
        }
        // A `send` frame is a turn: it counts like a POST of messages.
        const decision = await takeRateLimit(this.env, ref.rateKey, true);
        if (!decision.ok) return refuse({ type: "rate_limited", message: rateLimitMessage(decision), retryAfterSeconds: decision.retryAfterSeconds });
      }
      const attached = await resolveTurnAttachments(this.env.DB, ref.tenantId, attachments);
      if ("unknown" in attached) return refuse({ type: "invalid_request", message: unknownAttachmentMessage(attached.unknown) });
      const input: TurnInput = { content: [...attached.notes, ...content], activate: attached.tools, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) };
      const keyed = await this.claimKey(input);
      if (keyed) {
        // Only the asking socket hears about a repeated key; the others saw the turn itself.
        if ("refused" in keyed) return refuse({ type: keyed.refused.type, message: keyed.refused.message }, { idempotencyKey });
        for (const event of keyed.replay) ws.send(JSON.stringify(event));
        return;
      }
      // Events reach this socket (and every other one of the conversation) through broadcast.
      void this.enqueueTurn(ref, input, null, turnId);
    });
    this.frameChain = admit.catch(() => {});
    await admit;
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    try {
      ws.close(code === 1005 ? 1000 : code, "closing");
    } catch {
      // already closed
    }
  }

  private broadcast(event: TurnEvent): void {
    const sockets = this.ctx.getWebSockets();
    if (!sockets.length) return;
    const frame = JSON.stringify(event);
    for (const ws of sockets) {
      if (event.type === "message" && (this.caughtUp.get(ws) ?? 0) >= event.message.seq) continue;
      try {
        ws.send(frame);
      } catch {
        // a socket that went away mid-turn; the turn goes on
      }
    }
  }
}

function extras(m: NewMessage): Partial<StoredMessage> {
  const out: Partial<StoredMessage> = {};
  if (m.usage) out.usage = m.usage;
  if (m.model) out.model = m.model;
  if (m.stopReason !== undefined) out.stopReason = m.stopReason;
  if (m.agent) out.agent = m.agent;
  return out;
}

/** What a message weighs on replay: a sub-agent's messages are never replayed, so they weigh nothing. */
const replayChars = (m: StoredMessage): number => (isAgentSegment(m) ? 0 : messageChars(m));

/** Heads written before a field existed get its default, so every head has one shape. */
function normalizeHead(head: ConversationHead | null): ConversationHead | null {
  return head ? { ...head, foldCount: head.foldCount ?? 0, lastFoldAt: head.lastFoldAt ?? null, activeTools: head.activeTools ?? [], projectId: head.projectId ?? null } : null;
}
