// /v1/channels: named long-lived threads. A message goes to the channel's current conversation,
// which rotates after the channel's idle time; old conversations stay readable and searchable.
import { Hono } from "hono";
import { z } from "zod";
import { turnBodySchema } from "../../../core/turn-input";
import { channelObjectName } from "../../../durable-objects/channel-do";
import { badRequest, notFound } from "../errors";
import { requireModel, respondTurn, startChannelTurn, turnInput } from "../turns";
import type { AppEnv } from "../types";
import { listBody, pageOf } from "../paging";
import { intParam, jsonBody, query } from "../validate";
import { doc } from "../openapi/registry";
import { listOf } from "../openapi/schemas";
import { turnDoc } from "../openapi/turn-doc";
import { withLocationHint } from "../../../core/location-hint";
import { requestLocationHint } from "../location-hint";
import { wroteElsewhere } from "../d1-session";

const channel = z
  .looseObject({
    name: z.string(),
    conversationId: z.string().nullable(),
    rotationSeconds: z
      .number()
      .int()
      .meta({ description: "The idle time after which the next message starts a new conversation" }),
    lastActivityAt: z.string().nullable().meta({ description: "When the channel last carried a message (ISO 8601)" }),
    createdAt: z.string(),
    rotations: z
      .number()
      .int()
      .optional()
      .meta({ description: "How many times the channel moved to a new conversation (GET and PATCH of one channel)" }),
  })
  .meta({ id: "Channel", description: "A named long-lived thread and its current conversation." });

export const channelRoutes = new Hono<AppEnv>();

export const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const patchBody = z.strictObject({
  rotationSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 24 * 3600),
});
const listQuery = z.strictObject({
  limit: intParam(1, 500).default(100),
  cursor: z.string().regex(CHANNEL_NAME, "not a channel name").optional(),
});

/** The channel's object; `req` (the route's request) places it near its caller if this get() creates it. */
function channelStub(env: Env, of: { tenantId: string; name: string; req?: Request }) {
  const { tenantId, name, req } = of;
  if (!CHANNEL_NAME.test(name)) throw notFound("channel");
  return env.CHANNEL.get(
    env.CHANNEL.idFromName(channelObjectName(tenantId, name)),
    withLocationHint(req ? requestLocationHint(req) : null),
  );
}

channelRoutes.get(
  "/",
  doc({ summary: "List channels", responses: { 200: { description: "A page", schema: listOf(channel) } } }),
  query(listQuery),
  async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const { results } = await c.env.DB.prepare(
      `SELECT name, conversation_id AS conversationId, rotation_seconds AS rotationSeconds, last_activity_at AS lastActivityAt, created_at AS createdAt FROM channels WHERE tenant_id = ? AND name > ? ORDER BY name LIMIT ?`,
    )
      .bind(c.get("tenantId"), cursor ?? "", limit + 1)
      .all<{ name: string }>();
    return c.json(listBody(pageOf(results, limit, (ch) => ch.name)));
  },
);

channelRoutes.get(
  "/:name",
  doc({ summary: "Get a channel", responses: { 200: { description: "The channel", schema: channel } } }),
  async (c) => {
    const view = await channelStub(c.env, { tenantId: c.get("tenantId"), name: c.req.param("name") }).get(
      c.get("tenantId"),
      c.req.param("name"),
    );
    if (!view) throw notFound("channel");
    return c.json(view);
  },
);

channelRoutes.patch(
  "/:name",
  doc({
    summary: "Configure a channel (creating it)",
    responses: { 200: { description: "The channel", schema: channel } },
  }),
  ...jsonBody(patchBody),
  async (c) => {
    const name = c.req.param("name");
    const { view, bookmark } = await channelStub(c.env, {
      tenantId: c.get("tenantId"),
      name,
      req: c.req.raw,
    }).configure(c.get("tenantId"), name, c.req.valid("json"));
    // The object wrote the listing row on its own D1: the answer's bookmark covers it.
    wroteElsewhere(c, bookmark);
    return c.json(view);
  },
);

channelRoutes.delete(
  "/:name",
  doc({
    summary: "Delete a channel (its conversations stay)",
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    const tenantId = c.get("tenantId");
    const name = c.req.param("name");
    const { removed, bookmark } = await channelStub(c.env, { tenantId, name }).remove(tenantId, name);
    if (!removed) throw notFound("channel");
    wroteElsewhere(c, bookmark);
    return c.body(null, 204);
  },
);

channelRoutes.post(
  "/:name/messages",
  turnDoc("Send a turn to the channel's current conversation", { idempotent: false }),
  ...jsonBody(turnBodySchema),
  requireModel,
  async (c) => {
    const tenantId = c.get("tenantId");
    const name = c.req.param("name");
    // A retry may land after the channel rotated to a new conversation, where the key means nothing:
    // refused rather than silently ignored.
    if (c.req.header("idempotency-key") !== undefined)
      throw badRequest(
        "Idempotency-Key: not accepted on channel turns (a channel can move to a new conversation between attempts); send the turn to POST /v1/conversations/:id/messages",
      );
    if (!CHANNEL_NAME.test(name)) throw notFound("channel");
    // Resolved first: a refused body neither starts nor rotates the channel's conversation.
    const input = await turnInput(c.env, tenantId, c.req.valid("json"));
    const { conversationId, started } = await startChannelTurn(c.env, {
      tenantId,
      name,
      input,
      locationHint: requestLocationHint(c.req.raw),
      // A create or rotation wrote the conversation's and the channel's rows: the answer covers them.
      wrote: (bookmark) => wroteElsewhere(c, bookmark),
    });
    if (started.kind === "missing") throw notFound("conversation");
    return respondTurn(c, { conversationId, events: started.events });
  },
);
