// GET /v1/usage?from=&to=&conversation=&limit=&cursor=: the tenant's model usage and its cost at
// the catalog's prices, per conversation, per model and in total, over UTC days (both ends
// included). The per-conversation list is paged (the most costly first); totals and models are whole.
import { Hono } from "hono";
import { z } from "zod";
import { isId } from "../../../core/ids";
import { utcDay } from "../../../core/models/lookup";
import { usageReport } from "../../../services/usage";
import type { AppEnv } from "../types";
import { doc } from "../openapi/registry";
import { calendarDay, intParam, query } from "../validate";
import { badRequest } from "../errors";

export const usageRoutes = new Hono<AppEnv>();

const DAY_MS = 86_400_000;
const MAX_DAYS = 366;
/**
 * Conversations a page lists at most when the client pages (`limit` or `cursor` given): a year of a
 * busy tenant is many thousands. Without either, the whole list, as the route always answered.
 */
const MAX_CONVERSATIONS = 1000;
const day = calendarDay;
const usageQuery = z.strictObject({
  from: day.optional(),
  to: day.optional(),
  conversation: z
    .string()
    .refine((v) => isId("conv", v), "not a conversation id")
    .optional(),
  limit: intParam(1, MAX_CONVERSATIONS).optional(),
  // `next` of the previous page: its last conversation's cost in micro-USD and its id.
  cursor: z
    .string()
    .regex(/^(0|[1-9]\d{0,15})\./, "not a usage cursor (pass `next` back as it is)")
    .refine((v) => isId("conv", v.slice(v.indexOf(".") + 1)), "not a usage cursor (pass `next` back as it is)")
    .transform((v) => {
      const dot = v.indexOf(".");
      return { costMicro: Number(v.slice(0, dot)), conversationId: v.slice(dot + 1) };
    })
    .optional(),
});

/** services/usage.ts UsageTotals: one row of the report (the total, a conversation's, a model's). */
const totals = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
  cache_read_input_tokens: z.number(),
  thinking_tokens: z.number(),
  web_search_requests: z.number().int().meta({ description: "Server-side web searches the model ran" }),
  web_fetch_requests: z.number().int().meta({ description: "Server-side web fetches the model ran" }),
  cost_usd: z.number(),
  turns: z.number().int().meta({ description: "Turns that spent tokens (a paused turn's resumed parts count as one)" }),
  folds: z.number().int().meta({ description: "Fold calls (each delivery of a fold job its own)" }),
  titles: z.number().int().meta({ description: "Automatic title calls, one at most per conversation" }),
  unpricedCalls: z.number().int().meta({
    description: "Rows (a turn part, a fold or title call) on models the catalog does not price: not in cost_usd",
  }),
});
const reportSchema = z
  .looseObject({
    from: z.string(),
    to: z.string(),
    currency: z.literal("USD"),
    total: totals,
    conversations: z.array(totals.extend({ conversationId: z.string() })),
    models: z.array(totals.extend({ model: z.string().meta({ description: "The model the calls ran on" }) })),
    next: z.string().nullable(),
  })
  .meta({
    id: "Usage",
    description:
      "Tokens by kind and their cost in USD at the catalog's prices, per conversation (the most costly first; paged when `limit` or `cursor` is given, `next` the cursor of the next page; whole otherwise), per model and in total.",
  });

usageRoutes.get(
  "/",
  doc({
    summary: "The tenant's model usage and its cost over a range of UTC days (default: the last 30)",
    responses: { 200: { description: "Usage and cost", schema: reportSchema } },
  }),
  query(usageQuery),
  async (c) => {
    const q = c.req.valid("query");
    const to = q.to ?? utcDay();
    // The default range never reaches before 1970, as a given `from` may not.
    const from = q.from ?? utcDay(Math.max(0, Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS));
    if (from > to) throw badRequest("from: must not be after to");
    if ((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS >= MAX_DAYS)
      throw badRequest(`from: a range of at most ${MAX_DAYS} days`);
    const report = await usageReport(c.env.DB, {
      tenantId: c.get("tenantId"),
      from,
      to,
      conversationId: q.conversation,
      // Paged only when asked: a client that knows no `next` keeps getting every conversation.
      limit: q.limit ?? (q.cursor ? MAX_CONVERSATIONS : undefined),
      after: q.cursor,
    });
    return c.json({ from, to, currency: "USD", ...report });
  },
);
