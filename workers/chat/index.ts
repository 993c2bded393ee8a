// The chat worker's entry point: the HTTP API, the cron trigger, the automation, claims and export
// queues' consumers and the dead-letter queues', and the Durable Object classes.
import { envConfig } from "../../core/env-config";
import { app } from "./app";
import { AUTOMATION_CLAIMS_QUEUE, runClaimBatch } from "./automation-claims";
import { AUTOMATION_DLQ, recordDeadAutomations, runAutomationBatch } from "./automation-runner";
import { EXPORT_DLQ, EXPORT_QUEUE, recordDeadExports, runExportBatch } from "./export-runner";
import { runScheduled } from "./scheduled";
import { usePdfjsCMaps } from "../../services/attachments/formats/pdf/read";
import { BundledCMaps } from "../../services/attachments/formats/pdf/cmaps.gen";

// CJK fonts without /ToUnicode read through pdf.js need its predefined CMaps; only a Worker bundles them.
usePdfjsCMaps(BundledCMaps);

export { ChannelDO } from "../../durable-objects/channel-do";
export { ConversationDO } from "../../durable-objects/conversation/conversation-do";
export { RateLimiterDO } from "../../durable-objects/rate-limiter-do";

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    // A bad variable fails the tick with its name (logged), rather than claiming on a setting nobody chose.
    envConfig(env);
    ctx.waitUntil(runScheduled(controller, env));
  },
  async queue(batch, env) {
    // The same for a batch: it fails, and the queue retries it like any failed batch.
    envConfig(env);
    if (batch.queue === EXPORT_QUEUE) await runExportBatch(batch, env);
    else if (batch.queue === EXPORT_DLQ) await recordDeadExports(batch, env);
    else if (batch.queue === AUTOMATION_DLQ) await recordDeadAutomations(batch, env);
    else if (batch.queue === AUTOMATION_CLAIMS_QUEUE) await runClaimBatch(batch, env);
    else await runAutomationBatch(batch, env);
  },
} satisfies ExportedHandler<Env, unknown>;
