// API key management, one set of routes mounted twice: /v1/keys for a tenant's own keys
// (authenticated by one of them) and /v1/admin/tenants/:tenant/keys for the operator. The secret
// is in the create response only; listings carry ids, names, last4 and dates, never secrets or
// digests. Rotation is create + revoke. A key never makes one that outlives it (outlivesCreator).
import { Hono, type Context } from "hono";
import { z } from "zod";
import {
  createKey,
  getKey,
  isKeyId,
  type KeyRecord,
  LATEST_EXPIRY,
  listKeys,
  MAX_ACTIVE_KEYS,
  outlivesCreator,
  revokeKey,
} from "../../../services/keys/api-keys";
import { forgetKey } from "../../../services/keys/auth";
import { ApiError, badRequest, notFound, unauthorized } from "../errors";
import type { AppEnv } from "../types";
import { sessionDatabase } from "../../../services/d1-session-database";
import { intParam, jsonBody, query } from "../validate";
import { visibleText } from "../../../core/visible-text";
import { listOf } from "../openapi/schemas";
import { listBody, pageOf } from "../paging";
import { doc } from "../openapi/registry";

export interface KeyScope {
  /** The tenant whose keys the request manages (throws the 404 when there is none). */
  tenantOf(c: Context<AppEnv>): Promise<string>;
  /** The operator may revoke a tenant's last key (to shut it out); a tenant may not lock itself out. */
  mayRevokeLast: boolean;
}

const createBody = z.strictObject({
  // A name people read in the key list: the rule every name has (core/visible-text.ts), at most 100.
  name: visibleText(100).optional(),
  expiresAt: z.iso
    .datetime({ offset: true })
    // A Date keeps milliseconds: finer digits would be cut, and the key end sooner than asked (or
    // pass its creator's expiry once cut to it). Refused, not rounded.
    .refine((v) => !/\.\d{4}/.test(v), "at most 3 fractional digits of a second (milliseconds)")
    .transform((v) => new Date(v))
    .refine((d) => d.getTime() > Date.now(), "must be in the future")
    // Stored as an ISO string that SQL compares as text: past year 9999 it would read "+010000-…",
    // expired to those comparisons while Date.parse still took it as active.
    .refine((d) => d.getTime() <= Date.parse(LATEST_EXPIRY), `must be at or before ${LATEST_EXPIRY}`)
    .transform((d) => d.toISOString())
    .optional(),
});
/** The request's reads at the primary, where a key's writes decide (d1-session-database.ts). */
const primaryDatabase = (c: Context<AppEnv>): D1Database =>
  sessionDatabase(c.env.DB, c.env.DB.withSession("first-primary"));

/** Not revoked and not expired at `now` (ms). */
const activeAt = (key: KeyRecord, now: number): boolean =>
  !key.revokedAt && (key.expiresAt === null || Date.parse(key.expiresAt) > now);

const listQuery = z.strictObject({
  limit: intParam(1, 200).default(50),
  cursor: z.string().refine(isKeyId, "not a key id (key_…)").optional(),
});

/** A key's record as the routes answer it: never its secret. last4 is null for a key made before keys kept it (d1-migrations/0010). */
const keyRecord = z.looseObject({
  id: z.string(),
  name: z.string().nullable(),
  last4: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});

export function keyRoutes(scope: KeyScope): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  routes.post(
    "/",
    doc({
      summary: "Create an API key",
      description:
        "A key never makes one that outlives it: called with a key that expires, `expiresAt` is required and at most that key's expiry (a 400 naming `expiresAt` otherwise). The operator's admin token is not bound by this. A calling key that is revoked or expired at the primary (though a data center's auth cache may still accept it for up to 60 s) is a 401 `authentication_error`, checked in the insert itself.",
      responses: {
        201: {
          description: "The key; `apiKey` is shown this once",
          schema: z.looseObject({
            key: keyRecord,
            apiKey: z.string(),
          }),
        },
      },
    }),
    ...jsonBody(createBody),
    async (c) => {
      const tenantId = await scope.tenantOf(c);
      const { name, expiresAt } = c.req.valid("json");
      // Self-service only: the operator's requests carry no key.
      const creator = c.get("keyId");
      // Read at the primary, as the key itself was: a replica that has not seen a key made a
      // moment ago would have no row, and a missing row must never read as "never expires" (nor as
      // a key gone, after an insert refused at the cap).
      const primary = primaryDatabase(c);
      if (creator) {
        // The auth cache may still accept a key another data center revoked (or one just expired):
        // its row here says so. The insert checks it again, in the statement that writes.
        const own = await getKey(primary, tenantId, creator);
        if (!own || !activeAt(own, Date.now())) throw unauthorized();
        const outlives = outlivesCreator(own.expiresAt, expiresAt ?? null);
        if (outlives) throw badRequest(outlives);
      }
      const created = await createKey(c.env.DB, {
        tenantId,
        name: name ?? null,
        expiresAt: expiresAt ?? null,
        creatorId: creator ?? null,
        primary,
      });
      if (created === "creator_gone") throw unauthorized();
      if (created === "limit")
        throw new ApiError(
          409,
          "conflict",
          `this tenant has ${MAX_ACTIVE_KEYS} active keys, the most it may have; revoke one first`,
        );
      return c.json(created, 201);
    },
  );

  routes.get(
    "/",
    doc({
      summary: "List API keys (never secrets)",
      responses: {
        200: {
          description: "A page",
          schema: listOf(
            keyRecord.extend({
              current: z
                .boolean()
                .optional()
                .describe("Self-service listings only: whether this is the key the request was made with"),
            }),
          ),
        },
      },
    }),
    query(listQuery),
    async (c) => {
      const tenantId = await scope.tenantOf(c);
      const { limit, cursor } = c.req.valid("query");
      const rows = await listKeys(c.env.DB, { tenantId, limit: limit + 1, cursor });
      const caller = c.get("keyId");
      const keys = caller ? rows.map((k) => ({ ...k, current: k.id === caller })) : rows;
      return c.json(listBody(pageOf(keys, limit, (k) => k.id)));
    },
  );

  routes.delete(
    "/:keyId",
    doc({
      summary: "Revoke an API key",
      description:
        "A calling key that is revoked or expired at the primary (though a data center's auth cache may still accept it for up to 60 s) revokes nothing: a 401 `authentication_error`, checked in the update itself.",
      responses: {
        200: { description: "The revoked key", schema: z.looseObject({ key: z.looseObject({ id: z.string() }) }) },
      },
    }),
    async (c) => {
      const tenantId = await scope.tenantOf(c);
      const outcome = await revokeKey(c.env.DB, {
        tenantId,
        keyId: c.req.param("keyId"),
        allowLast: scope.mayRevokeLast,
        // A key revoked elsewhere but still in this data center's auth cache revokes nothing.
        callerId: c.get("keyId") ?? null,
        // The key and its caller as the update saw them: a session's replica may lack a key made a moment ago.
        primary: primaryDatabase(c),
      });
      if (outcome === "caller_gone") throw unauthorized();
      if (outcome === "not_found") throw notFound("key");
      if (outcome === "last_key")
        throw new ApiError(
          409,
          "conflict",
          "this is the tenant's last active key (no other active key lasts as long as it); create another before revoking it",
        );
      if (outcome.revokedHash) await forgetKey(outcome.revokedHash);
      return c.json({ key: outcome.key });
    },
  );

  return routes;
}
