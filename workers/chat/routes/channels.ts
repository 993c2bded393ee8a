// /v1/channels: named long-lived threads. A message goes to the channel's current conversation,
// which rotates after the channel's idle time; old conversations stay readable and searchable.
import { Hono } from "hono";
import { z } from "zod";
import { toContentBlocks, turnBodySchema } from "../../../core/turn-input";
import { channelObjectName } from "../../../durable-objects/channel-do";
import { badRequest, notFound } from "../errors";
import { respondTurn, startChannelTurn } from "../turns";
import type { AppEnv } from "../types";
import { jsonBody } from "../validate";

export const channelRoutes = new Hono<AppEnv>();

export const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const patchBody = z.strictObject({ rotationSeconds: z.number().int().min(1).max(30 * 24 * 3600) });

function channelStub(env: Env, tenantId: string, name: string) {
  if (!CHANNEL_NAME.test(name)) throw notFound("channel");
  return env.CHANNEL.get(env.CHANNEL.idFromName(channelObjectName(tenantId, name)));
}

channelRoutes.get("/", async (c) => {
  const { results } = await c.env.DB.prepare(
    `SELECT name, conversation_id AS conversationId, rotation_seconds AS rotationSeconds, last_activity_at AS lastActivityAt, created_at AS createdAt FROM channels WHERE tenant_id = ? ORDER BY name LIMIT 500`,
  )
    .bind(c.get("tenantId"))
    .all();
  return c.json({ channels: results });
});

channelRoutes.get("/:name", async (c) => {
  const view = await channelStub(c.env, c.get("tenantId"), c.req.param("name")).get(c.get("tenantId"), c.req.param("name"));
  if (!view) throw notFound("channel");
  return c.json(view);
});

channelRoutes.patch("/:name", ...jsonBody(patchBody), async (c) => {
  const name = c.req.param("name");
  return c.json(await channelStub(c.env, c.get("tenantId"), name).configure(c.get("tenantId"), name, c.req.valid("json")));
});

channelRoutes.post("/:name/messages", ...jsonBody(turnBodySchema), async (c) => {
  const tenantId = c.get("tenantId");
  const name = c.req.param("name");
  const body = c.req.valid("json");
  if (body.attachments?.length) throw badRequest(`attachments: unknown attachment ${body.attachments[0]}`);
  if (!CHANNEL_NAME.test(name)) throw notFound("channel");
  const { conversationId, events } = await startChannelTurn(c.env, tenantId, name, toContentBlocks(body.content));
  if (!events) throw notFound("conversation");
  return respondTurn(c, conversationId, events);
});
