// What a turn's agent loop is given (turn-loop.ts): the model, the tools, persistence and the
// event stream, and the delegation hooks of workflow mode. Types only, so the loop's parts
// (tool-step.ts) name them without importing the loop.
import type Anthropic from "@anthropic-ai/sdk";
import type { TurnEvent } from "../core/events";
import type { ModelEntry } from "../core/models/catalog";
import type { ModelRequest, NewMessage, StoredMessage, Usage } from "../core/types";
import type { ToolContext, ToolOutput, ToolRegistry } from "./tools/registry";
import type { CompactionOutcome, TurnCompactor } from "./turn-compaction";

/** A task the model handed to agent_delegate. */
export interface DelegatedTask {
  name: string;
  task: string;
  toolUseId: string;
}

/** What a delegated run gives back to the loop that delegated it. */
export interface DelegatedRun {
  output: ToolOutput;
  usage: Usage;
  modelMs: number;
}

/**
 * The turn's bound of model calls (settings' maxToolIterations): the master's steps and every
 * sub-agent's count against it together. One object per turn, shared by reference; a loop takes a
 * call synchronously before it makes it, so runs in the same isolate never see the same calls left.
 */
export interface CallBudget {
  readonly limit: number;
  /** Steps the turn has taken so far, its sub-agents' included. */
  used: number;
}

/** The delegating loop as the sub-agent sees it: its current request and its event stream. */
export interface DelegationParent {
  turnId: string;
  request: ModelRequest;
  emit(event: TurnEvent): void;
  /** The turn's bound of model calls, which the delegated run's calls count against (the loop sets it). */
  budget?: CallBudget;
  /** The delegating turn's stop: a sub-agent stops with it. */
  signal?: AbortSignal;
  /** Told of the delegated run's usage so far after every call that adds to it (its loop's onUsage). */
  onUsage?(usage: Usage): void;
}

export interface TurnDeps {
  turnId: string;
  client: Anthropic;
  registry: ToolRegistry;
  toolContext: ToolContext;
  /** This loop's own bound of steps (a sub-agent's 12; the master's, the turn's maxToolIterations). */
  maxIterations: number;
  /**
   * The turn's shared bound (a sub-agent's loop gets its master's, through DelegationParent);
   * absent, the loop makes it from maxIterations and the state it starts from.
   */
  budget?: CallBudget;
  contextWindowTokens: number;
  /** The model the requests go to (its maximum output bounds a continuation's extra room). */
  model: ModelEntry;
  /** The model answering now, when it can change within the turn (a refusal's fallback); `model` otherwise. */
  activeModel?(): ModelEntry;
  /** The in-turn safety net; absent, requests go out as built. */
  compactor?: TurnCompactor;
  /** The full request for the next model call, assembled from the freshest stored state. */
  buildRequest(): ModelRequest;
  /** The thinking blocks of the history the requests are built from, and the prefixes they followed. */
  knownThinking(): ReadonlyMap<string, string>;
  /** Appends messages to the conversation (R2, then the DO index) and returns them as stored. */
  persist(messages: NewMessage[]): Promise<StoredMessage[]>;
  emit(event: TurnEvent): void;
  /** Told of every compaction pass. */
  onCompaction?(outcome: CompactionOutcome, forced: boolean): void;
  /** Told of every model request as sent, with the tokens the provider counted (null on failure). */
  onRequest?(sent: { request: ModelRequest; step: number; reportedTokens: number | null; compacted: boolean }): void;
  /**
   * Told of the turn's usage so far each time a model call (a compaction's, a delegated run's once
   * it returns or fails) adds to it: what the turn has spent if it then throws before returning
   * its outcome.
   */
  onUsage?(usage: Usage): void;
  /** Workflow mode: runs a delegated task (as a loop of its own); absent, this loop cannot delegate. */
  delegate?(task: DelegatedTask, parent: DelegationParent): Promise<DelegatedRun>;
  /**
   * The master's loop may pause for client tools; absent (a sub-agent), a client tool's call runs
   * its definition's `run`, an error result: a sub-agent's thread has no client to wait for.
   */
  pauseForClient?: boolean;
  /**
   * After a refusal: the model to ask instead (the settings' fallback), for the rest of the turn.
   * Returns its id, or null when there is none (or it was already asked).
   */
  fallBack?(): Promise<string | null>;
  /** The wait before a stream that failed mid-way is asked again (the SDK's backoff by default). */
  retryDelayMs?(attempt: number): number;
  /** Aborted when someone stops the turn: it ends as "interrupted" (see the head of this file). */
  signal?: AbortSignal;
}
