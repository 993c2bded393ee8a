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
import { planSettingsPatch } from "../../services/models/resolve";
import type { ConversationHead, ConversationView } from "../../services/record/conversation-head";
import { FORGET_MEMORY_MAP, formerTitles } from "./index-outbox";
import { masterMessages } from "./regenerate";
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

export async function patchConversation(
  parts: { env: Env; store: ConversationStore; record: ConversationRecord; turnRunning: () => boolean },
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
      // A model change moves what the PATCH does not name as creation moves what a conversation
      // inherits: a fallback that became the model goes, a reserve the new window cannot hold
      // becomes the new model's; what the PATCH names itself is checked as sent.
      const settings = settingsOnModel(head.settings, {
        patch: planned.patch,
        from: planned.from,
        to: planned.to,
        named: patch,
      });
      const problem =
        crossCheckSettings(settings, planned.to) ??
        betweenToolsEffortConflict(store, head, { settings, model: planned.to });
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
 * send a between_tools request at another effort than a reply the model reads back ran at (its
 * stored mark, in the tail after the fold and any import, not replaced by a regenerate) are refused. Another
 * model's thinking is not read back, so it does not count.
 */
function betweenToolsEffortConflict(
  store: ConversationStore,
  head: ConversationHead,
  { settings, model }: { settings: Settings; model: ModelEntry },
): string | null {
  if (settings.thinking !== "between_tools") return null;
  const effort = effectiveEffort(settings, model);
  // An import's thinking is not sent back either (replay-rules.ts `withoutSeals`).
  const from = Math.max(head.summarizedThroughMessage ?? 0, head.importedThroughMessage ?? 0);
  // What the master's replay sends back: no sub-agent's thread, nothing superseded, no refused reply.
  const ranAt = masterMessages(store.listAfter(from, Number.MAX_SAFE_INTEGER), head).find(
    (m) =>
      m.betweenToolsEffort !== undefined &&
      m.betweenToolsEffort !== effort &&
      m.stopReason !== "refusal" &&
      (m.model === model.id || model.aliases.includes(m.model ?? "")),
  )?.betweenToolsEffort;
  return ranAt
    ? `settings.effort: with thinking "between_tools" the effort cannot change within a conversation: its thinking ran at ${ranAt} (asked: ${effort}); keep ${ranAt}, use thinking "adaptive", or start a new conversation`
    : null;
}
