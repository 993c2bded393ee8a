// GET /v1/corpus/:date — the tenant's corpus log of that UTC day, as markdown.
import { Hono } from "hono";
import { readCorpusDay } from "../../../services/corpus";
import { badRequest, notFound } from "../errors";
import type { AppEnv } from "../types";
import { doc } from "../openapi/registry";

export const corpusRoutes = new Hono<AppEnv>();

corpusRoutes.get(
  "/:date",
  doc({
    summary: "The corpus log of one UTC day (YYYY-MM-DD)",
    responses: { 200: { description: "Markdown", content: { "text/markdown": { schema: { type: "string" } } } } },
  }),
  async (c) => {
    const day = c.req.param("date");
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`)))
      throw badRequest("date: give YYYY-MM-DD");
    const log = await readCorpusDay(c.env.BUCKET, c.get("tenantId"), day);
    if (log === null) throw notFound("corpus log for that day");
    return c.body(log, 200, { "content-type": "text/markdown; charset=utf-8" });
  },
);
