// POST /v1/conversations/import: a new conversation from a transcript (Anthropic Messages JSON,
// this API's JSON export, or JSONL of messages), up to IMPORT_BODY_LIMIT. The body is streamed:
// checked message by message and staged in R2 (services/transfer/import-staging.ts), and only a
// complete, valid transcript becomes a conversation. No model call; the cortex indexes it and
// folds run in the background. An export of a conversation with no messages (its `conversation`
// says lastSeq 0) becomes an empty one.
import { Hono } from "hono";
import { z } from "zod";
import { requestLocationHint } from "../location-hint";
import {
  createConversation,
  createKeyedConversation,
  keyedConversation,
} from "../../../durable-objects/conversation-create";
import { requestFingerprint } from "../../../core/idempotency-key";
import { IMPORTED_TITLE } from "../../../core/title";
import { idempotencyKeyHeader, keyedAnswer } from "../idempotency-header";
import {
  discardStaged,
  IMPORT_BODY_LIMIT,
  ImportRefused,
  ImportTooLarge,
  stageTranscript,
  type ImportFormat,
} from "../../../services/transfer/import-staging";
import { ApiError, badRequest, notFound } from "../errors";
import { parseMediaType, refuseNonUtf8Charset } from "../media-type";
import { doc } from "../openapi/registry";
import { conversationSchema, errorSchema } from "../openapi/schemas";
import type { AppEnv } from "../types";
import { query, visibleName } from "../validate";

const importQuery = z.strictObject({
  // The title rule of create and PATCH: a title reaches the model (conversation_list) and every list.
  title: visibleName.optional(),
  format: z.enum(["json", "jsonl"]).optional(),
});

const JSONL_TYPES = new Set([
  "application/jsonl",
  "application/x-ndjson",
  "application/x-jsonlines",
  "application/jsonlines",
]);

function formatOf(contentType: string | undefined, asked: ImportFormat | undefined): ImportFormat {
  const type = parseMediaType(contentType);
  const byType: ImportFormat | null =
    type.essence === "application/json" ? "json" : JSONL_TYPES.has(type.essence) ? "jsonl" : null;
  if (!byType)
    throw new ApiError(
      415,
      "unsupported_media_type",
      "Content-Type must be application/json (a messages array) or application/x-ndjson (one message per line)",
    );
  refuseNonUtf8Charset(type);
  return asked ?? byType;
}

export const importNewConversationRoutes = new Hono<AppEnv>();

importNewConversationRoutes.post(
  "/",
  doc({
    summary: "Create a conversation from a transcript (no model call), streamed",
    description:
      "The body is `{\"messages\": [...]}` in Anthropic Messages format (other top-level fields, such as `model` or an export's metadata, are ignored; an element whose `type` is not `message` is a 400 naming it), or JSONL with one message per line (`Content-Type: application/x-ndjson`; lines whose `type` is not `message` are skipped, but a second `conversation` line, as in a tenant-wide export file, is a 400 naming it: an import is one conversation). Up to 64 MiB (67,108,864 bytes; a larger body is a 413 naming the limit), checked message by message and never held whole; nesting deeper than 64 levels (the document around the messages, or a content block's field such as a tool call's input: 67 levels from a message's own brace; an export's `conversation`, whose `requiresAction` copies a paused call, may nest 68 levels from its own brace) is a 400, and so are more than 50,000 messages the model would be sent (superseded and sub-agent messages aside). A tool_use is followed in its thread by a user message or ends the transcript, and a tool_result answers a call of the message right before it, ahead of that message's other content; a call left without its result (a turn paused on client tools, or one cut off mid-step, as this API's exports carry them) is taken, and the model is sent the interrupted-call result for it. A tool_use before the first user message is a 400. A transcript needs at least one message, except this API's export of a conversation with none (a JSON document whose top-level `conversation` says `lastSeq` 0, or JSONL whose `conversation` line does), which creates an empty conversation; an export whose messages were cut or edited away is refused as empty. A bad transcript is a 400 naming the first bad message (`messages[i]`, and its line for JSONL), and nothing is stored. `title` follows the rule of a conversation's title on create and PATCH (a 400 naming `title`).",
    rawBody: {
      description:
        "The transcript: JSON with a messages array (or a bare array), or JSONL (also sent as application/jsonl); any other Content-Type is a 415",
      content: {
        "application/json": {
          schema: {
            oneOf: [
              {
                type: "object",
                required: ["messages"],
                properties: { messages: { type: "array", items: { type: "object" } } },
              },
              { type: "array", items: { type: "object" } },
            ],
          },
        },
        "application/x-ndjson": { schema: { type: "string", contentMediaType: "application/x-ndjson" } },
      },
    },
    headers: [
      {
        name: "Idempotency-Key",
        description:
          "Resend with the same key, body and query: the conversation the key created is answered again (201, `idempotent-replayed: true`), never a second one (24 h, per tenant, one space with POST /v1/conversations's keys); another body or query under the key is a 422.",
      },
    ],
    responses: {
      201: {
        description: "The new conversation (or, for a key already used, the conversation it created)",
        schema: conversationSchema,
      },
      404: {
        description:
          "The conversation was deleted while the import was committed (a DELETE found it listed), or the conversation this Idempotency-Key created was deleted",
        schema: errorSchema,
      },
      409: {
        description: "The import holding this Idempotency-Key has not finished (idempotency_in_progress)",
        schema: errorSchema,
      },
      422: {
        description: "This Idempotency-Key came with another request (idempotency_key_reused)",
        schema: errorSchema,
      },
    },
  }),
  query(importQuery),
  async (c) => {
    const { title, format } = c.req.valid("query");
    const chosen = formatOf(c.req.header("content-type"), format);
    const tooLarge = () =>
      new ApiError(413, "payload_too_large", `request body larger than ${IMPORT_BODY_LIMIT} bytes`);
    if (Number(c.req.header("content-length")) > IMPORT_BODY_LIMIT) throw tooLarge();
    const body = c.req.raw.body;
    if (!body) throw badRequest("body: empty; send a transcript");
    const tenantId = c.get("tenantId");
    const key = idempotencyKeyHeader(c);
    // A keyed import is told by its body's digest (taken as the body streams in) with its query
    // and format: a retry matches, another transcript under the key does not.
    const digest = key === undefined ? undefined : new crypto.DigestStream("SHA-256");
    const digestWriter = digest?.getWriter();
    let staged: Awaited<ReturnType<typeof stageTranscript>>;
    try {
      staged = await stageTranscript(c.env.BUCKET, {
        tenantId,
        body,
        format: chosen,
        onBytes: digestWriter && ((bytes) => digestWriter.write(bytes)),
      });
    } catch (err) {
      if (err instanceof ImportRefused) throw badRequest(err.message);
      if (err instanceof ImportTooLarge) throw tooLarge();
      throw err;
    }
    try {
      let createKey: { key: string; fingerprint: string } | undefined;
      if (key !== undefined && digest && digestWriter) {
        await digestWriter.close();
        const bodySha256 = [...new Uint8Array(await digest.digest)]
          .map((b) => b.toString(16).padStart(2, "0"))
          .join("");
        createKey = { key, fingerprint: await requestFingerprint({ import: { bodySha256, format: chosen, title } }) };
        const earlier = await keyedConversation(c.env, tenantId, createKey);
        if (earlier) return keyedAnswer(c, earlier);
      }
      const request = {
        tenantId,
        // No ?title=: "Imported conversation", which the first turn's automatic title replaces; a
        // given one (even "New conversation") is the caller's, kept as a create's.
        init: { title, untitledAs: IMPORTED_TITLE },
        // An export with no messages staged nothing: the conversation is created empty, as POST /v1/conversations does.
        staged: staged.messages ? staged : undefined,
        locationHint: requestLocationHint(c.req.raw),
      };
      const created = createKey
        ? await createKeyedConversation(c.env, { ...request, createKey })
        : await createConversation(c.env, request);
      if (created.kind === "invalid") throw badRequest(created.message);
      if (created.kind === "created") return c.json(created.view, 201);
      // Deleted while its object committed it (listed, a DELETE found it): as one that never existed.
      if (created.kind === "deleted" && !createKey) throw notFound("conversation");
      return keyedAnswer(c, created);
    } finally {
      // Committed or not, the staging copy has served its purpose.
      c.executionCtx.waitUntil(discardStaged(c.env.BUCKET, tenantId, staged));
    }
  },
);
