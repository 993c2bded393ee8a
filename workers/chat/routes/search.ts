// GET /v1/search: the cortex over every message of the tenant's conversations.
import { Hono } from "hono";
import { z } from "zod";
import { isId } from "../../../core/ids";
import { searchCortex } from "../cortex";
import type { AppEnv } from "../types";
import { intParam, query } from "../validate";

export const searchRoutes = new Hono<AppEnv>();

const searchQuery = z.strictObject({
  q: z.string().trim().min(1, "q: required").max(500).refine((v) => !/[\u0000-\u001f\u007f]/.test(v), "no control characters"),
  conversation: z.string().refine((v) => isId("conv", v), "not a conversation id").optional(),
  kind: z.enum(["message", "memory", "episode", "page"]).optional(),
  limit: intParam(1, 100).default(20),
});

searchRoutes.get("/", query(searchQuery), async (c) => {
  const { q, conversation, kind, limit } = c.req.valid("query");
  const results = await searchCortex(c.env.DB, c.get("tenantId"), q, { conversationId: conversation, kinds: kind ? [kind] : undefined, limit });
  return c.json({ query: q, results });
});
