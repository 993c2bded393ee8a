// PATCH of a conversation: the settings planned against the model (a model change moves the
// model-bound settings with it), then title and settings written in one serialized head write. A
// title the user sets marks the conversation as titled by its user and counts as activity. A title
// alone resolves no model and checks no setting.
import { capSummary } from "../../core/fold";
import type { ModelEntry } from "../../core/models/catalog";
import {
  crossCheckSettings,
  effectiveEffort,
  type Settings,
  type SettingsPatch,
  settingsOnModel,
} from "../../core/settings";
import { thinkingKey } from "../../core/thinking-guard";
import { isThinkingBlock, type StoredMessage } from "../../core/types";
import { planSettingsPatch } from "../../services/models/resolve";
import type { ConversationHead, ConversationView } from "../../services/record/conversation-head";
import { FORGET_MEMORY_MAP, formerTitles } from "./index-outbox";
import type { PausedTurns } from "./paused-turn";
import { masterMessages } from "./regenerate";
import type { ReplayCache } from "./replay-cache";
import type { ConversationStore } from "./conversation-store";
import type { ConversationRecord } from "./record";

/** The former titles a rename's forget names at most (titledByUser). */
const FORMER_TITLES = 20;

export interface ConversationChange {
  title?: string;
  settings?: SettingsPatch;
}

/** A rename or settings change: the updated view, the settings problem that refused it, or no such conversation. */
export type PatchAnswer =
  | { kind: "updated"; view: ConversationView }
  | { kind: "invalid"; message: string }
  /** Refused for now: a running turn would send the change mid-way (see `effortUnderRunningTurn`). */
  | { kind: "busy"; message: string }
  | { kind: "missing" };

/** How often a settings change is planned again when another change moved the model meanwhile. */
const MAX_REPLANS = 4;

/** What a PATCH reads and writes: the object's record and store, and what builds its next request. */
interface PatchParts {
  env: Env;
  store: ConversationStore;
  record: ConversationRecord;
  cache: ReplayCache;
  paused: Pick<PausedTurns, "get">;
  turnRunning: () => boolean;
}

export async function patchConversation(
  parts: PatchParts,
  loaded: ConversationHead,
  change: ConversationChange,
): Promise<PatchAnswer> {
  const { env, store, record, turnRunning } = parts;
  // A rename touches no setting: no model is resolved (a retired or unknown one, the Models API
  // unreachable) and settings that no longer pass today's checks do not refuse it.
  const patch = change.settings;
  if (!patch) return rename(parts, change.title);
  let current = loaded.settings;
  for (let replans = 0; ; replans++) {
    const planned = await planSettingsPatch(env, { current, patch });
    if (!planned.ok) return { kind: "invalid", message: planned.message };
    // A model change moves what the PATCH does not name as creation moves what a conversation
    // inherits: a fallback that became the model goes, a reserve the new window cannot hold
    // becomes the new model's; what the PATCH names itself is checked as sent.
    const onModel = (head: ConversationHead) =>
      settingsOnModel(head.settings, { patch: planned.patch, from: planned.from, to: planned.to, named: patch });
    // Building the next request reads D1 (the prompt's inputs): done before the serialized write.
    const before = record.head ?? loaded;
    const sentBack = await thinkingSentBack(parts, { head: before, settings: onModel(before), model: planned.to });
    const answer = await record.updateHead<PatchAnswer | { kind: "replan"; settings: Settings }>((head) => {
      // The plan holds for the model it was made against: a change that moved the model while this
      // one was planned (two PATCHes at once) would otherwise get the old model's limits and defaults.
      if (head.settings.model !== current.model)
        return replans < MAX_REPLANS
          ? { next: null, result: { kind: "replan", settings: head.settings } }
          : {
              next: null,
              result: {
                kind: "invalid",
                message: "settings.model: changed by other requests meanwhile; send it again",
              },
            };
      const settings = onModel(head);
      const problem =
        crossCheckSettings(settings, planned.to) ??
        betweenToolsEffortConflict(store, head, { settings, model: planned.to, sentBack });
      if (problem) return { next: null, result: { kind: "invalid", message: problem } };
      const busy = turnRunning()
        ? effortUnderRunningTurn({ before: head.settings, after: settings, model: planned.from ?? planned.to })
        : null;
      if (busy) return { next: null, result: { kind: "busy", message: busy } };
      const now = new Date().toISOString();
      const next: ConversationHead = {
        ...head,
        title: change.title ?? head.title,
        settings,
        summary: summaryWithin(head.summary, settings.summaryMaxChars),
        updatedAt: now,
      };
      if (change.title !== undefined) titledByUser(store, { now, from: head.title, to: next.title });
      return { next, result: { kind: "updated", view: record.view(next) } };
    });
    if (answer.kind !== "replan") return answer;
    current = answer.settings;
  }
}

/**
 * The summary held to a lowered cap at once, as a fold's commit holds a summary whose cap was lowered
 * while its call ran (cut at a line or sentence end): it rides every request, and the cap says how
 * much of the window it may take. Unchanged when it fits (a raised cap restores nothing: the
 * originals are read back with conversation_read).
 */
const summaryWithin = (summary: string | null, max: number): string | null =>
  summary !== null && summary.length > max ? capSummary(summary, max) : summary;

/** A title change alone: one head write, the settings as they are. */
function rename(
  { store, record }: { store: ConversationStore; record: ConversationRecord },
  title: string | undefined,
): Promise<PatchAnswer> {
  return record.updateHead<PatchAnswer>((head) => {
    const now = new Date().toISOString();
    const next: ConversationHead = { ...head, title: title ?? head.title, updatedAt: now };
    if (title !== undefined) titledByUser(store, { now, from: head.title, to: next.title });
    return { next, result: { kind: "updated", view: record.view(next) } };
  });
}

/**
 * A title the user set is never replaced by the automatic one (auto-title.ts checks this in the
 * same serialized head writes), and a rename counts as activity for the listing. A title that
 * really changed also leaves the tenant's <memory_map>, whose topics are read from the listing's
 * titles: the outbox forgets the stored maps that name a word of the old title once it has written
 * the new title there (index-outbox.ts), so the old words do not ride the prompts all day; a map
 * that never named them stays, and every conversation's prompt prefix with it.
 */
function titledByUser(store: ConversationStore, { now, from, to }: { now: string; from: string; to: string }): void {
  store.setTitleSource("user");
  store.touchActivity(now);
  if (from === to) return;
  // Every title since the last forget (renames in a row), the newest few: each may be in a map. An
  // item naming none (put before titles were named) forgets every map, and stays so.
  const waiting = store.outbox().find((item) => item.key === FORGET_MEMORY_MAP);
  if (waiting && !formerTitles(waiting.payload)) return;
  const titles = formerTitles(waiting?.payload) ?? [];
  store.putOutbox(FORGET_MEMORY_MAP, { titles: [...titles.filter((t) => t !== from), from].slice(-FORMER_TITLES) });
}

/**
 * A running turn reads the settings at each of its model calls (turn-runner.ts), and its reply is
 * stored only when its call ends: a change of effort under "between_tools" while a call is in
 * flight would find no reply of that effort yet, and the turn's next call would send its thinking
 * back at the new effort, which the API refuses. So while a turn runs, neither the thinking mode nor
 * the effort changes when either side is "between_tools" (one step through "adaptive" and back would
 * walk round a rule on the effort alone): such a change waits for the turn's end (a 409).
 */
function effortUnderRunningTurn({
  before,
  after,
  model,
}: {
  before: Settings;
  after: Settings;
  model: ModelEntry;
}): string | null {
  if (before.thinking !== "between_tools" && after.thinking !== "between_tools") return null;
  const running = effectiveEffort(before, model);
  const asked = effectiveEffort(after, model);
  if (before.thinking === after.thinking && running === asked) return null;
  const field = running === asked ? "settings.thinking" : "settings.effort";
  return `${field}: a turn is running with thinking "${before.thinking}" at effort ${running}; under "between_tools" neither changes within a turn; send the change again when the turn ends`;
}

/**
 * Under thinking "between_tools" the API takes no change of effort within a conversation
 * (https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5): settings that would
 * send a between_tools request at another effort than a reply whose thinking that request carries
 * ran at (its stored mark) are refused. A marked reply whose thinking no longer goes back holds
 * nothing: the thinking guard leaves it out of every request once the prefix it followed moved (a
 * tool activated, a stub batch, the day's memory map, a fold), and a refused turn, an import or a
 * superseded reply is never replayed. What goes back is read from the next request as the turn
 * builds it (`sentBack`); when that reading is missing or older than the head or tail it is checked
 * against, every marked reply counts, as one that may go back.
 */
function betweenToolsEffortConflict(
  store: ConversationStore,
  head: ConversationHead,
  { settings, model, sentBack }: { settings: Settings; model: ModelEntry; sentBack: SentBack | null },
): string | null {
  if (settings.thinking !== "between_tools") return null;
  const effort = effectiveEffort(settings, model);
  const fresh = sentBack?.head === head && sentBack.lastSeq === store.lastSeq() ? sentBack : null;
  const ranAt = otherEffortReplies(store, head, { effort, model }).find(
    (m) => !fresh || carried(m, fresh.keys),
  )?.betweenToolsEffort;
  return ranAt
    ? `settings.effort: with thinking "between_tools" the effort cannot change within a conversation: its thinking ran at ${ranAt} (asked: ${effort}); keep ${ranAt}, use thinking "adaptive", or start a new conversation`
    : null;
}

/**
 * The tail's replies marked at another between_tools effort than `effort`: those that may send
 * thinking of that effort back. No sub-agent's thread, nothing superseded (the master's replay),
 * nothing folded or imported (an import's thinking is not sent back: replay-rules.ts
 * `withoutSeals`), no refusal; another model's thinking is not read back either.
 */
function otherEffortReplies(
  store: ConversationStore,
  head: ConversationHead,
  { effort, model }: { effort: string | null; model: ModelEntry },
): StoredMessage[] {
  const from = Math.max(head.summarizedThroughMessage ?? 0, head.importedThroughMessage ?? 0);
  return masterMessages(store.listAfter(from, Number.MAX_SAFE_INTEGER), head).filter(
    (m) =>
      m.betweenToolsEffort !== undefined &&
      m.betweenToolsEffort !== effort &&
      m.stopReason !== "refusal" &&
      (m.model === model.id || model.aliases.includes(m.model ?? "")),
  );
}

/** The thinking blocks the next request carries (by thinkingKey), read for one head and the tail through one seq. */
interface SentBack {
  head: ConversationHead;
  lastSeq: number;
  keys: ReadonlySet<string>;
}

/** Whether a reply's thinking is among the blocks the next request carries. */
const carried = (m: StoredMessage, keys: ReadonlySet<string>): boolean =>
  m.content.some((b) => isThinkingBlock(b) && keys.has(thinkingKey(b)));

/**
 * The thinking the next request would carry under the new settings: the request the turn builds
 * (replay-cache.ts buildRequest, as /replay shows it, the results first while a paused turn waits
 * on them), after its thinking guard (core/thinking-guard.ts keepValidThinking) and without refused
 * turns. Built only when a reply ran at another effort; null when it cannot be built (the prompt's
 * inputs unreadable): then every such reply counts.
 */
async function thinkingSentBack(
  { store, cache, paused }: Pick<PatchParts, "store" | "cache" | "paused">,
  { head, settings, model }: { head: ConversationHead; settings: Settings; model: ModelEntry },
): Promise<SentBack | null> {
  if (settings.thinking !== "between_tools") return null;
  if (!otherEffortReplies(store, head, { effort: effectiveEffort(settings, model), model }).length) return null;
  // Read before the awaits: a message stored meanwhile makes the reading stale (see `fresh`).
  const lastSeq = store.lastSeq();
  const next: ConversationHead = { ...head, settings };
  try {
    const awaitingResults = !!(await paused.get());
    const { request } = cache.buildRequest(next, await cache.promptContext(next, model), { awaitingResults });
    const keys = new Set<string>();
    for (const m of request.messages)
      if (typeof m.content !== "string") for (const b of m.content) if (isThinkingBlock(b)) keys.add(thinkingKey(b));
    return { head, lastSeq, keys };
  } catch (err) {
    console.error("next request unavailable for the between_tools effort check", err);
    return null;
  }
}
