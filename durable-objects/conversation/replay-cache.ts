// The hot replay cache: the verbatim tail after the fold boundary, its chars, and the system
// prompt's inputs (the day's memory map, project files), from which every model request is built.
import { chooseFoldMark } from "../../core/fold";
import type { ModelEntry } from "../../core/models/catalog";
import { entryFromModelInfo } from "../../core/models/lookup";
import type { ModelEnv } from "../../core/model-provider";
import { settingsOnModel } from "../../core/settings";
import { resolveTurnModel } from "../../services/models/resolve";
import { buildModelRequest } from "../../core/replay";
import { messageChars } from "../../core/render";
import { buildSystemPrompt, cacheScopeFor } from "../../core/system-prompt";
import { isAgentSegment, type ModelRequest, type StoredMessage, type SystemBlock } from "../../core/types";
import { toolRegistry } from "../../agent/tools";
import type { ToolRegistry } from "../../agent/tools/registry";
import { MEMORY_MAP_RECHECK_MS, memoryMapFor, utcDay } from "../../services/memory/memory-map";
import {
  projectFilesBlock,
  projectWithFiles,
  PROMPT_PROJECT_FILES,
  projectTools as projectToolsFor,
} from "../../services/projects";
import type { ConversationHead } from "../../services/record/conversation-head";
import { withoutRefusedTurns } from "../../core/replay-rules";
import { recountFetchedChars } from "./chars-recount";
import type { ObjectScope } from "./object-scope";
import { masterMessages } from "./regenerate";
import { TurnTools } from "./turn-tools";

/** The /replay view: the next request and its estimate. */
export interface ReplayRequest {
  model: string;
  max_tokens: number;
  thinking?: ModelRequest["thinking"];
  output_config?: ModelRequest["output_config"];
  system: ModelRequest["system"];
  tools: ModelRequest["tools"];
  messages: ModelRequest["messages"];
  estimate: ReturnType<typeof buildModelRequest>["estimate"];
}

/**
 * The /replay view as its JSON's UTF-8 bytes. A view may pass Workers' 32 MiB cap on an RPC value
 * (a tail of imported messages too long for one request, which a turn would compact); a stream
 * crosses RPC without that cap.
 */
export type ReplayView = ReadableStream<Uint8Array>;

/**
 * `JSON.stringify(view)`, byte for byte, written message by message as the reader pulls: the
 * view's messages are the cached tail's own blocks, and one string of the whole view would be a
 * second copy of it (two, with its UTF-8).
 */
export function viewJson(view: ReplayRequest): ReplayView {
  const encoder = new TextEncoder();
  function* parts(): Generator<string> {
    let sep = "{";
    for (const [key, value] of Object.entries(view)) {
      // What JSON.stringify leaves out of an object.
      if (value === undefined || typeof value === "function" || typeof value === "symbol") continue;
      const name = `${sep}${JSON.stringify(key)}:`;
      sep = ",";
      if (key !== "messages") {
        yield name + JSON.stringify(value);
        continue;
      }
      yield `${name}[`;
      let comma = "";
      for (const m of view.messages) {
        yield comma + JSON.stringify(m);
        comma = ",";
      }
      yield "]";
    }
    yield sep === "{" ? "{}" : "}";
  }
  const chunks = parts();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
  });
}

export interface PromptContext {
  /** The catalog entry of the model the requests go to. */
  model: ModelEntry;
  system: SystemBlock[];
  /** Tools the conversation's project files need, available without activation. */
  projectTools: string[];
  /** The built-in tools and the tenant's own. */
  tools: ToolRegistry;
}

/** What a message weighs on replay: a sub-agent's messages are never replayed, so they weigh nothing. */
export const replayChars = (m: StoredMessage): number => (isAgentSegment(m) ? 0 : messageChars(m));

/**
 * Per-turn work reads only this cache, never the whole transcript from storage: the tail is read
 * once, then kept current by `appended` and by following the head's fold boundary.
 */
export class ReplayCache {
  /** Hot replay source: the messages a request replays, kept in memory across turns. */
  private history: StoredMessage[] | null = null;
  /** Replay chars after the fold boundary; null until computed. */
  private unsummarized: number | null = null;
  /** The fold boundary (summarizedThroughMessage) the tail and its chars were read for. */
  private through = 0;
  /** The tenant's memory map of the day (read from D1 again every MEMORY_MAP_RECHECK_MS). */
  private memoryMap: { day: string; text: string; readAt: number } | null = null;
  /** The tenant's own tools, live and as indexed today. */
  readonly turnTools: TurnTools;

  constructor(private readonly scope: ObjectScope) {
    this.turnTools = new TurnTools(scope);
  }

  /** Drops the tail and its chars: the next use reads them again from SQLite. */
  forget(): void {
    this.history = null;
    this.unsummarized = null;
  }

  /** A conversation just created has nothing to replay. */
  startEmpty(): void {
    this.history = [];
    this.unsummarized = 0;
  }

  /** Messages just written to SQLite join the tail (a sub-agent's segment never does). */
  appended(stored: readonly StoredMessage[]): void {
    this.history?.push(...stored.filter((m) => !isAgentSegment(m)));
    if (this.unsummarized !== null) for (const m of stored) this.unsummarized += replayChars(m);
  }

  /** A fold moved the boundary: the tail now starts at its boundary message. */
  private folded(boundarySeq: number): void {
    this.history = this.history?.filter((m) => m.seq >= boundarySeq) ?? null;
    this.unsummarized = null;
    this.through = boundarySeq - 1;
  }

  /**
   * The tail follows the head it is asked for: once a fold commit moved the head's boundary, no
   * request meets the old tail, whose start the new summary holds.
   */
  private follow(head: ConversationHead): void {
    const through = head.summarizedThroughMessage ?? 0;
    if (through > this.through) this.folded(through + 1);
    else if (through < this.through) {
      // Never by a fold: a head rebuilt or replaced. The tail is read again.
      this.forget();
      this.through = through;
    }
  }

  /** The verbatim tail: every message after the fold boundary (none superseded), cached across turns. */
  replaySource(head: ConversationHead): StoredMessage[] {
    this.follow(head);
    this.history ??= masterMessages(
      this.scope.store.listAfter(head.summarizedThroughMessage ?? 0, Number.MAX_SAFE_INTEGER),
      head,
    );
    return this.history;
  }

  /**
   * The messages of the turn that began at `firstSeq` (a sub-agent's thread aside), as the tail
   * holds them: a continuation takes them from here, so the turn's content is held once, never read
   * again from SQLite beside it. Read from SQLite only when the tail does not reach back to the
   * turn (a fold moved the boundary into it) or no head is at hand.
   */
  turnMessages(head: ConversationHead | undefined, firstSeq: number): StoredMessage[] {
    const tail = head ? this.replaySource(head) : null;
    if (tail && this.through < firstSeq) {
      let from = tail.length;
      while (from > 0 && tail[from - 1].seq >= firstSeq) from--;
      return tail.slice(from);
    }
    return this.scope.store.range(firstSeq, this.scope.store.lastSeq()).filter((m) => !isAgentSegment(m));
  }

  unsummarizedChars(head: ConversationHead): number {
    this.follow(head);
    if (this.unsummarized === null) {
      // Rows weighed before the weighing of a fetched PDF changed are weighed again first (once per object).
      recountFetchedChars(this.scope, replayChars);
      this.unsummarized = this.scope.store.charsAfter(head.summarizedThroughMessage ?? 0);
    }
    return this.unsummarized;
  }

  /**
   * What a fold now would fold: the unsummarized chars before the fold mark (the kept tail is
   * not counted). Comparing this with the threshold makes each fold absorb more than
   * `foldThresholdChars` of conversation: one summarization call per threshold of growth. The
   * refused turns a fold leaves out (`foldable`) are not counted either, and the mark is chosen
   * without them as the fold chooses it: a large refused turn would otherwise send fold jobs that
   * find nothing to fold.
   */
  foldableChars(head: ConversationHead): number {
    const source = this.replaySource(head);
    const region = withoutRefusedTurns(source, true); // the fold's own choice (fold-coordinator.ts foldable)
    const mark = chooseFoldMark(region, head.settings.tailMessages);
    if (mark === null) return 0;
    let left = 0;
    for (let i = mark; i < region.length; i++) left += messageChars(region[i]);
    if (region.length < source.length) {
      const kept = new Set(region);
      for (const m of source) if (!kept.has(m)) left += replayChars(m);
    }
    return this.unsummarizedChars(head) - left;
  }

  /**
   * The system prompt — byte-stable within a UTC day (the memory map changes at most daily) and
   * until a project file is added — and the tools the project's files need.
   */
  async promptContext(head: ConversationHead, model: ModelEntry): Promise<PromptContext> {
    let project: string | null = null;
    let projectTools: string[] = [];
    if (head.projectId) {
      const found = await projectWithFiles(this.scope.env.DB, {
        tenantId: head.tenantId,
        id: head.projectId,
        limit: PROMPT_PROJECT_FILES + 1,
      });
      if (found) {
        const files = found.files.slice(0, PROMPT_PROJECT_FILES);
        project = projectFilesBlock(found.project, files, found.files.length > files.length);
        projectTools = projectToolsFor(files);
      }
    }
    const tools = await this.turnTools.registry(head);
    return { model, system: await this.systemPrompt(head, project, tools), projectTools, tools };
  }

  private async systemPrompt(
    head: ConversationHead,
    project: string | null,
    tools: ToolRegistry,
  ): Promise<SystemBlock[]> {
    const day = utcDay();
    // The day's map, read again now and then: a delete forgets the stored one (memory-map.ts).
    if (this.memoryMap?.day !== day || Date.now() - this.memoryMap.readAt > MEMORY_MAP_RECHECK_MS) {
      try {
        const text = await memoryMapFor(this.scope.env.DB, head.tenantId, day);
        this.memoryMap = { day, text, readAt: Date.now() };
      } catch (err) {
        // Without the map the turn still runs; the next request tries again.
        console.error("memory map unavailable", err);
      }
    }
    const capabilities = [...toolRegistry.capabilities(), ...(await this.turnTools.indexLines(tools, day))];
    return buildSystemPrompt({
      // The tenant's own cache scope opens the prompt: no other tenant's request reads its prefix.
      scope: await cacheScopeFor(head.tenantId),
      capabilities,
      memoryMap: this.memoryMap?.day === day ? this.memoryMap.text : null,
      project,
    });
  }

  /**
   * The one request-assembly path, for the model and for /replay alike. `view`: the /replay view,
   * between turns (ReplayInput.between), with whether a paused turn waits on its tools' results.
   */
  buildRequest(head: ConversationHead, prompt: PromptContext, view?: { awaitingResults: boolean }) {
    return buildModelRequest({
      between: view !== undefined,
      awaitingResults: view?.awaitingResults,
      conversationId: head.id,
      settings: head.settings,
      model: prompt.model,
      system: prompt.system,
      tools: prompt.tools.schemasFor([...head.activeTools, ...prompt.projectTools]),
      history: this.replaySource(head),
      summary:
        head.summary && head.summarizedThroughMessage
          ? { summary: head.summary, throughSeq: head.summarizedThroughMessage }
          : null,
      stubbedThrough: head.stubbedThroughMessage,
      importedThrough: head.importedThroughMessage,
    });
  }

  /**
   * The /replay view: the next request as a turn would build it now, on the model it would resolve
   * (a retired model's replacement, with the settings that follow it) or, unresolved, on
   * conservative limits; between turns (ReplayInput.between, core/replay.ts), but for the new
   * prompt, or for the results a paused turn waits on (`awaitingResults`: the object's paused
   * state). Streamed as JSON (viewJson).
   */
  async replayView(head: ConversationHead, env: ModelEnv, awaitingResults: boolean): Promise<ReplayView> {
    return viewJson(await this.replayRequest(head, env, awaitingResults));
  }

  /** The view replayView streams, built at once (a build that fails fails the call, not the stream). */
  async replayRequest(head: ConversationHead, env: ModelEnv, awaitingResults: boolean): Promise<ReplayRequest> {
    const resolved = await resolveTurnModel(env, head.settings.model);
    const model = resolved.ok ? resolved.entry : entryFromModelInfo({ id: head.settings.model });
    // As record.moveToModel will, once a turn resolves it.
    const settings =
      resolved.ok && resolved.movedFrom
        ? settingsOnModel(head.settings, { patch: { model: model.id }, from: null, to: model })
        : head.settings;
    const moved = { ...head, settings };
    const context = await this.promptContext(moved, model);
    const { request, estimate } = this.buildRequest(moved, context, { awaitingResults });
    return { ...request, estimate };
  }
}
