// GET /v1/conversations/:id/export: the complete, untouched transcript with its summary, fold
// history, compaction cards and attachment references, streamed as JSON, JSONL or Markdown.
import { Hono } from "hono";
import { z } from "zod";
import { isId } from "../../../core/ids";
import { EXPORT_MEDIA_TYPES, exportText, textStream } from "../../../services/transfer/export-format";
import { notFound } from "../errors";
import { exportSourceFor } from "../export-source";
import { doc } from "../openapi/registry";
import type { AppEnv } from "../types";
import { query } from "../validate";

const exportQuery = z.strictObject({ format: z.enum(["json", "jsonl", "markdown"]).default("json") });
const EXTENSIONS = { json: "json", jsonl: "jsonl", markdown: "md" } as const;

export const conversationExportRoutes = new Hono<AppEnv>();

conversationExportRoutes.get(
  "/",
  doc({
    summary: "Export the conversation: transcript, summary, fold history, cards, attachment links",
    description:
      "Streamed. `json`: one document whose `messages` are the stored messages in seq order (POST /v1/conversations/import reads it back). `jsonl`: a `conversation` line, then `episode`, `card` and `attachment` lines, then one stored message per line. `markdown`: the same for reading. Attachments are references with the URL their bytes download from.",
    responses: {
      200: {
        description: "The export",
        content: {
          "application/json": { schema: { type: "object" } },
          "application/x-ndjson": { schema: { type: "string" } },
          "text/markdown": { schema: { type: "string" } },
        },
      },
    },
  }),
  query(exportQuery),
  async (c) => {
    const id = c.req.param("id") ?? "";
    if (!isId("conv", id)) throw notFound("conversation");
    const { format } = c.req.valid("query");
    const source = await exportSourceFor(c.env, {
      tenantId: c.get("tenantId"),
      conversationId: id,
      base: new URL(c.req.url).origin,
    });
    if (!source) throw notFound("conversation");
    return new Response(textStream(exportText(source, format)), {
      headers: {
        "content-type": EXPORT_MEDIA_TYPES[format],
        "content-disposition": `attachment; filename="${id}.${EXTENSIONS[format]}"`,
      },
    });
  },
);
