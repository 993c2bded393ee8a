// The chat worker's entry point: the HTTP API, the cron trigger, and the Durable Object class.
import { app } from "./app";
import { runScheduled } from "./scheduled";

export { ConversationDO } from "../../durable-objects/conversation-do";

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runScheduled(controller, env));
  },
} satisfies ExportedHandler<Env>;
