// The workers files that need storage of their own (the workers-isolated project, project.ts),
// and why. A file that fires the cron trigger or claims due automations acts on every tenant's
// rows, so it is one of them (test/unit/workers-isolated-files.test.ts finds those).
/** Files that need storage of their own, and why. */
export const ISOLATED = [
  // The cron tick acts on every tenant's due automations, corpus days and expired exports: these
  // files fire ticks (some with a clock days or years ahead) and count what a tick claims or finds.
  "test/workers/automation-paging.test.ts",
  "test/workers/automation-client-tools.test.ts",
  "test/workers/automation-claim-races.test.ts",
  "test/workers/automation-fast-schedules.test.ts",
  "test/workers/automations.test.ts",
  "test/workers/automation-tenant-shut-out.test.ts",
  "test/workers/automation-key-expiry.test.ts",
  // Claims a page of due automations across the database: another file's due automations would be claimed.
  "test/workers/automation-schedule-spelling.test.ts",
  "test/workers/queue-and-cron.test.ts",
  "test/workers/corpus.test.ts",
  "test/workers/corpus-rollup-bounded.test.ts",
  // Claims a page of due automations at a clock years ahead: other files' automations would be claimed.
  "test/workers/deletion-races.test.ts",
  "test/workers/automations-far-slots.test.ts",
  // Claims the due automations of the next minute and counts them: other files' would be claimed and counted.
  "test/workers/automation-update-primary.test.ts",
  // Fires the cron trigger half an hour ahead: other files' automations due by then would be claimed.
  "test/workers/automations-redelivery.test.ts",
  // Fires cron ticks years ahead and counts every run each sends again: other files' unsent runs,
  // and their due automations, would be sent, claimed and counted.
  "test/workers/automation-resend-all.test.ts",
  "test/workers/env-config.test.ts",
  "test/workers/exports.test.ts",
  // Sweeps every tenant's staged imports with a clock hours ahead: another file's import in flight would go.
  "test/workers/import-staging-sweep.test.ts",
  // Sweeps every tenant's conversation create keys past 24 hours, and counts what it swept.
  "test/workers/create-keys-sweep.test.ts",
  // Read the dev tenant's corpus log of today, which other files' turns fill (and the ticks above roll up).
  "test/workers/models.test.ts",
  // Write cortex notes with fixed ids ("mine", "theirs") straight into a shard, as if each file had it alone.
  "test/workers/cortex-term-stats.test.ts",
  "test/workers/semantic-search.test.ts",
  "test/workers/vector-outbox.test.ts",
  // Compares the rank of a short and a long message: FTS5's bm25() takes its document lengths and
  // counts over the whole shard, so other files' rows in it can flip a close pair.
  "test/workers/search-ranking.test.ts",
];
