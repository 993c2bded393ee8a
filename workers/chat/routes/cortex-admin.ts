// Admin routes of the cortex's D1 shards (mounted under /v1/admin/cortex, behind the admin token):
// how many tenants each shard holds, moving one tenant between shards a bounded step per call
// (services/cortex/move.ts; scripts/move-cortex-tenant.mjs walks it to the end).
import { count, isNotNull } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { Hono } from "hono";
import { z } from "zod";
import { cortexShards } from "../../../db/schema";
import { MoveConflict, moveTenantStep } from "../../../services/cortex/move";
import { SHARD_BINDING, shardNames } from "../../../services/cortex/routing";
import { tenantExists } from "../../../services/keys/api-keys";
import { ApiError, badRequest, notFound } from "../errors";
import { doc } from "../openapi/registry";
import type { AppEnv } from "../types";
import { jsonBody } from "../validate";
import { sessionDatabase } from "../../../services/d1-session-database";

export const cortexAdminRoutes = new Hono<AppEnv>();

cortexAdminRoutes.get(
  "/shards",
  doc({
    summary: "The cortex's D1 shards and how many tenants each holds",
    responses: {
      200: {
        description: "Every bound shard, in number order; new tenants go to the one with the fewest",
        schema: z.looseObject({ shards: z.array(z.looseObject({ shard: z.string(), tenants: z.number() })) }),
      },
    },
  }),
  async (c) => {
    const counts = await drizzle(c.env.DB)
      .select({ shard: cortexShards.shard, n: count() })
      .from(cortexShards)
      .where(isNotNull(cortexShards.shard))
      .groupBy(cortexShards.shard)
      .all();
    return c.json({
      shards: shardNames(c.env).map((shard) => ({ shard, tenants: counts.find((r) => r.shard === shard)?.n ?? 0 })),
    });
  },
);

const moveBody = z.strictObject({
  to: z.string().regex(SHARD_BINDING, "not a cortex shard binding (CORTEX_SHARD_<n>)"),
  // The `next` of the previous call: the last rowid copied.
  cursor: z
    .string()
    .regex(/^(0|[1-9]\d{0,15})$/, "not a move cursor (pass `next` back as it is)")
    .optional(),
  limit: z.number().int().min(1).max(500).default(200),
});

cortexAdminRoutes.post(
  "/tenants/:tenant/move",
  doc({
    summary: "Move a tenant's cortex to another D1 shard, one bounded step",
    responses: {
      200: {
        description: "What this step did; call again with `next` (after `waitSeconds`) until it is null",
        schema: z.looseObject({
          phase: z.string(),
          copied: z.number(),
          removed: z.number(),
          next: z.string().nullable(),
          waitSeconds: z.number(),
        }),
      },
    },
  }),
  ...jsonBody(moveBody),
  async (c) => {
    const tenantId = c.req.param("tenant");
    const { to, cursor, limit } = c.req.valid("json");
    // At the primary, as the keys route reads it: a tenant just created is found whatever bookmark is sent.
    const primary = sessionDatabase(c.env.DB, c.env.DB.withSession("first-primary"));
    if (!(await tenantExists(primary, tenantId))) throw notFound("tenant");
    if (!shardNames(c.env).includes(to)) throw badRequest(`to: ${to} is not a cortex shard bound to this worker`);
    try {
      return c.json(await moveTenantStep(c.env, { tenantId, to, cursor: Number(cursor ?? 0), limit }));
    } catch (err) {
      if (err instanceof MoveConflict) throw new ApiError(409, "conflict", err.message);
      throw err;
    }
  },
);
