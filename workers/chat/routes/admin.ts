// Admin routes: tenants, their first API key and their keys after that. Authenticated by
// ADMIN_TOKEN, not by API keys: requireAdminToken, which app.ts's authentication runs for every
// /v1/admin path (these routes are mounted there only), as it checks a key for the other routes.
import { type Context, Hono } from "hono";
import { z } from "zod";
import { sessionDatabase } from "../../../services/d1-session-database";
import { tenantExists, tenantIdNamed } from "../../../services/keys/api-keys";
import { adminToken, bearer, createTenant, safeEqual } from "../../../services/keys/auth";
import { clientAddress, countAuthFailure, refuseBlocked } from "../auth-failures";
import { ApiError, notFound, unauthorized } from "../errors";
import type { AppEnv } from "../types";
import { jsonBody } from "../validate";
import { cortexAdminRoutes } from "./cortex-admin";
import { keyRoutes } from "./keys";
import { doc } from "../openapi/registry";

export const adminRoutes = new Hono<AppEnv>();

/**
 * Refuses a request to /v1/admin (the bare prefix included) without the admin token: the 401, or
 * the 429 of an address over its limit of failures. app.ts runs it in place of a key's check,
 * before the request's D1 session and the query check, so a refusal carries no bookmark and is
 * the same whatever else the request sent.
 */
export async function requireAdminToken(c: Context<AppEnv>): Promise<void> {
  const expected = adminToken(c.env);
  const given = bearer(c.req.header("authorization"));
  const address = clientAddress(c.req.header("cf-connecting-ip"));
  // An address over its limit of failures is refused before the token is compared: a right guess
  // from it must not get through either, or the limit would not stop guessing at speed.
  if (given) refuseBlocked(c.env, address);
  if (!expected || !given || !safeEqual(given, expected)) {
    // A wrong token counts against its address like a wrong key.
    if (given) await countAuthFailure(c.env, address);
    throw unauthorized("missing or invalid admin token");
  }
}

const tenantBody = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9][A-Za-z0-9 _.-]*$/, "letters, digits, space and _ . - only"),
});

adminRoutes.post(
  "/tenants",
  doc({
    summary: "Create a tenant and its first API key",
    responses: {
      201: {
        description: "The tenant; `apiKey` is shown this once",
        schema: z.looseObject({
          tenant: z.looseObject({ id: z.string(), name: z.string(), createdAt: z.string() }),
          apiKey: z.string(),
        }),
      },
    },
  }),
  ...jsonBody(tenantBody),
  async (c) => {
    const { name } = c.req.valid("json");
    const created = await createTenant(c.env, name);
    if (!created) {
      // A create whose answer was lost cannot be retried into a key: the name is taken now. The
      // refusal names the tenant, so the operator mints its key through the keys route instead.
      const id = await tenantIdNamed(c.env.DB, name);
      const next = id ? `: ${id}; mint a key for it through POST /v1/admin/tenants/${id}/keys` : "";
      throw new ApiError(409, "conflict", `a tenant with that name exists${next}`);
    }
    return c.json(created, 201);
  },
);

adminRoutes.route("/cortex", cortexAdminRoutes);

adminRoutes.route(
  "/tenants/:tenant/keys",
  keyRoutes({
    tenantOf: async (c) => {
      const tenantId = c.req.param("tenant") ?? "";
      // Read at the primary: a session a bookmark from before the tenant was created started on a
      // replica that has not seen it yet must not answer a 404 for it.
      const primary = sessionDatabase(c.env.DB, c.env.DB.withSession("first-primary"));
      if (!(await tenantExists(primary, tenantId))) throw notFound("tenant");
      return tenantId;
    },
    mayRevokeLast: true,
  }),
);
