// GET /v1/corpus/:date — the tenant's corpus log of that UTC day, as markdown (streamed).
import { Hono } from "hono";
import { streamCorpusDay } from "../../../services/corpus";
import { badRequest, notFound } from "../errors";
import type { AppEnv } from "../types";
import { doc } from "../openapi/registry";
import { calendarDay } from "../validate";

export const corpusRoutes = new Hono<AppEnv>();

corpusRoutes.get(
  "/:date",
  doc({
    summary: "The corpus log of one UTC day (YYYY-MM-DD)",
    responses: { 200: { description: "Markdown", content: { "text/markdown": { schema: { type: "string" } } } } },
  }),
  async (c) => {
    const day = c.req.param("date");
    const checked = calendarDay.safeParse(day);
    if (!checked.success) throw badRequest(`date: ${checked.error.issues[0].message}`);
    // Streamed: a day not yet rolled up is read from its events, in batches, as it is sent.
    const log = await streamCorpusDay(c.env.BUCKET, { tenantId: c.get("tenantId"), day });
    if (log === null) throw notFound("corpus log for that day");
    return c.body(log, 200, { "content-type": "text/markdown; charset=utf-8" });
  },
);
