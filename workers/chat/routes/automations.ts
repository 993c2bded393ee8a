// /v1/automations: scheduled prompts on a channel — create, list, get, patch (pause/resume),
// delete — and each one's recorded runs.
import { type Context, Hono } from "hono";
import { z } from "zod";
import { nonBlankText } from "../../../core/blank-text";
import { type CronProblemKind, cronProblem, normalizeCron } from "../../../core/cron";
import { isId } from "../../../core/ids";
import {
  createAutomation,
  creatorExpiry,
  deleteAutomation,
  getAutomation,
  listAutomations,
  listRuns,
  MAX_AUTOMATIONS,
  updateAutomation,
  type AutomationRunRow,
} from "../../../services/automations";
import { ApiError, notFound, unauthorized } from "../errors";
import { requestLocationHint } from "../location-hint";
import type { AppEnv } from "../types";
import { idCursor, listBody, pageOf } from "../paging";
import { intParam, jsonBody, query, visibleName } from "../validate";
import { CHANNEL_NAME } from "./channels";
import { doc } from "../openapi/registry";
import { listOf, resource } from "../openapi/schemas";

const automation = resource("Automation", "A scheduled prompt on a channel.");
const automationRun = resource("AutomationRun", "One slot of an automation: its run's status and outcome.");

export const automationRoutes = new Hono<AppEnv>();

/**
 * The calling key's expiry, read at the primary (creatorExpiry); a key that is not active there
 * (gone, revoked or expired, though still in this data center's auth cache) is a 401.
 */
async function keyExpiry(c: Context<AppEnv>): Promise<string | null> {
  const creator = await creatorExpiry(c.env.DB, { tenantId: c.get("tenantId"), keyId: c.get("keyId") });
  if (!creator) throw unauthorized();
  return creator.expiresAt;
}

/** A resume or reschedule that found the automation changed by others each time it read it. */
const changedMeanwhile = () =>
  new ApiError(409, "conflict", "the automation kept changing while this change was decided; send it again");

/** How a refusal reads after `schedule: `, by its kind. */
const REFUSAL: Record<CronProblemKind, (message: string) => string> = {
  syntax: (message) => `not a cron expression: ${message}`,
  // A cron feature not read here, or a schedule that can never run, is well-formed: it is refused
  // for that alone, as the docs word it.
  unsupported: (message) => message,
  never: (message) => message,
};
const SCHEDULE_MAX = 100;

const schedule = z
  .string()
  .trim()
  .min(1)
  // Stored in one spelling (extra spaces, an @name's case): the same schedule sent again is no change.
  .transform(normalizeCron)
  // The bound is on that spelling, so how many spaces were sent between fields does not count.
  .pipe(
    z
      .string()
      .max(SCHEDULE_MAX, {
        message: `at most ${SCHEDULE_MAX} characters once trimmed and its fields one space apart`,
        abort: true,
      })
      .superRefine((v, ctx) => {
        const problem = cronProblem(v);
        if (problem) ctx.addIssue({ code: "custom", message: REFUSAL[problem.kind](problem.message) });
      }),
  )
  .meta({
    description: `Five-field UTC cron (minute hour day-of-month month day-of-week) or @hourly, @daily, …; at most ${SCHEDULE_MAX} characters once trimmed and its fields one space apart.`,
  });
const fields = {
  // A name people read in lists: the rule of a title or a project's name, within 100 characters.
  name: visibleName.max(100),
  schedule,
  // Each run sends it as a turn's text: blank text the Messages API refuses never gets stored.
  prompt: nonBlankText(20_000, { trim: true }),
  channel: z
    .string()
    .regex(CHANNEL_NAME, "a letter or digit first, then letters, digits and . _ - only, at most 64 in all"),
  paused: z.boolean(),
};
const createBody = z.strictObject({ ...fields, paused: fields.paused.optional() });
const patchBody = z
  .strictObject(fields)
  .partial()
  .refine((b) => Object.keys(b).length > 0, "give at least one field");
const listQuery = z.strictObject({
  limit: intParam(1, 100).default(20),
  cursor: z
    .string()
    .refine((v) => isId("auto", v), "not an automation id")
    .optional(),
});
const runsQuery = z.strictObject({ limit: intParam(1, 200).default(50), cursor: idCursor("run", "a run id") });

const automationId = (id: string) => {
  if (!isId("auto", id)) throw notFound("automation");
  return id;
};
// next_run_at is the cron tick's bookkeeping, not part of the resource.
const publicAutomation = <T extends { tenantId: string; nextRunAt: string; locationHint: string | null }>({
  tenantId: _t,
  nextRunAt: _n,
  locationHint: _l,
  ...a
}: T) => a;
// usage_turns and turn_keys_* are the attempts' bookkeeping (which turn keys the usage counts, which
// were sent, to which conversation, from which key), not part of the resource.
const publicRun = ({
  tenantId: _t,
  usageTurns: _u,
  turnKeysSent: _k,
  turnKeysConversationId: _c,
  turnKeysFrom: _f,
  usage,
  ...r
}: AutomationRunRow) => ({
  ...r,
  usage: usage ? JSON.parse(usage) : null,
});

/** An update's automation, or the error its other outcomes answer (a key gone meanwhile: 401). */
function updated(a: Awaited<ReturnType<typeof updateAutomation>>) {
  if (a === "creator_gone") throw unauthorized();
  if (a === "changed") throw changedMeanwhile();
  if (!a) throw notFound("automation");
  return publicAutomation(a);
}

automationRoutes.post(
  "/",
  doc({ summary: "Create an automation", responses: { 201: { description: "Created", schema: automation } } }),
  ...jsonBody(createBody),
  async (c) => {
    // The creator's region places the channel objects a run may have to create (it has no caller of its own).
    const created = await createAutomation(c.env.DB, {
      tenantId: c.get("tenantId"),
      input: c.req.valid("json"),
      locationHint: requestLocationHint(c.req.raw),
      // A short-lived key's automation stops with the key: it may not outlive it.
      expiresAt: await keyExpiry(c),
      creatorId: c.get("keyId"),
    });
    if (created === "creator_gone") throw unauthorized();
    if (created === "limit")
      throw new ApiError(
        409,
        "conflict",
        `the tenant has ${MAX_AUTOMATIONS} automations, the most it may have; delete one before creating another`,
      );
    return c.json(publicAutomation(created), 201);
  },
);

automationRoutes.get(
  "/",
  doc({
    summary: "List automations",
    responses: { 200: { description: "A page", schema: listOf(automation) } },
  }),
  query(listQuery),
  async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listAutomations(c.env.DB, { tenantId: c.get("tenantId"), limit: limit + 1, before: cursor });
    return c.json(listBody(pageOf(rows.map(publicAutomation), limit, (a) => a.id)));
  },
);

automationRoutes.get(
  "/:id",
  doc({ summary: "Get an automation", responses: { 200: { description: "The automation", schema: automation } } }),
  async (c) => {
    const a = await getAutomation(c.env.DB, c.get("tenantId"), automationId(c.req.param("id")));
    if (!a) throw notFound("automation");
    return c.json(publicAutomation(a));
  },
);

automationRoutes.patch(
  "/:id",
  doc({ summary: "Change an automation", responses: { 200: { description: "The automation", schema: automation } } }),
  ...jsonBody(patchBody),
  async (c) => {
    const change = c.req.valid("json");
    // What the automation runs, and when, once changed, is the patching key's: it runs until that
    // key's expiry (none for a key that never expires), as if that key had created it. The same
    // prompt or schedule sent again changes neither, nor the expiry (updateAutomation decides).
    const remade = change.prompt !== undefined || change.schedule !== undefined;
    const a = await updateAutomation(c.env.DB, {
      tenantId: c.get("tenantId"),
      id: automationId(c.req.param("id")),
      change,
      keyExpiry: remade ? { expiresAt: await keyExpiry(c), keyId: c.get("keyId") } : undefined,
    });
    return c.json(updated(a));
  },
);

for (const [verb, paused] of [
  ["pause", true],
  ["resume", false],
] as const) {
  automationRoutes.post(
    `/:id/${verb}`,
    doc({
      summary: `${verb[0].toUpperCase()}${verb.slice(1)} an automation`,
      responses: { 200: { description: "The automation", schema: automation } },
    }),
    async (c) => {
      const a = await updateAutomation(c.env.DB, {
        tenantId: c.get("tenantId"),
        id: automationId(c.req.param("id")),
        change: { paused },
      });
      return c.json(updated(a));
    },
  );
}

automationRoutes.delete(
  "/:id",
  doc({ summary: "Delete an automation", responses: { 204: { description: "Deleted" } } }),
  async (c) => {
    if (!(await deleteAutomation(c.env.DB, c.get("tenantId"), automationId(c.req.param("id")))))
      throw notFound("automation");
    return c.body(null, 204);
  },
);

automationRoutes.get(
  "/:id/runs",
  doc({
    summary: "An automation's recorded runs",
    responses: { 200: { description: "A page", schema: listOf(automationRun) } },
  }),
  query(runsQuery),
  async (c) => {
    const id = automationId(c.req.param("id"));
    if (!(await getAutomation(c.env.DB, c.get("tenantId"), id))) throw notFound("automation");
    const { limit, cursor } = c.req.valid("query");
    const runs = await listRuns(c.env.DB, {
      tenantId: c.get("tenantId"),
      automationId: id,
      limit: limit + 1,
      before: cursor,
    });
    return c.json(pageOf(runs.map(publicRun), limit, (r) => r.id));
  },
);
