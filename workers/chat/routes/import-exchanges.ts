// POST /v1/conversations/:id/import: history from another system joins the transcript verbatim
// (no model call), indexed in the cortex like any turn. Whole exchanges only, so the conversation
// still alternates user/assistant when the next turn runs. Blank text is refused (the Messages API
// refuses it, and stored it would fail every later turn).
import { Hono } from "hono";
import { z } from "zod";
import { nonBlankText } from "../../../core/blank-text";
import { isId } from "../../../core/ids";
import type { ImportAnswer } from "../../../durable-objects/conversation/conversation-do";
import { ApiError, badRequest, notFound } from "../errors";
import type { AppEnv } from "../types";
import { doc } from "../openapi/registry";
import { errorSchema } from "../openapi/schemas";
import { jsonBody } from "../validate";

export const IMPORT_MAX_MESSAGES = 200;
const IMPORT_MAX_CHARS = 100_000;

const importBody = z.strictObject({
  messages: z
    .array(z.strictObject({ role: z.enum(["user", "assistant"]), text: nonBlankText(IMPORT_MAX_CHARS) }))
    .min(2, "messages: at least one exchange")
    .max(IMPORT_MAX_MESSAGES)
    .refine(
      (ms) => ms.every((m, i) => m.role === (i % 2 === 0 ? "user" : "assistant")) && ms.length % 2 === 0,
      "messages: whole exchanges, user then assistant",
    ),
});

export const importExchangesRoutes = new Hono<AppEnv>();

const imported = z.object({
  messages: z.array(z.object({ id: z.string(), seq: z.number().int(), role: z.enum(["user", "assistant"]) })),
});

importExchangesRoutes.post(
  "/",
  doc({
    summary: "Append history from elsewhere, verbatim, without a model call (whole exchanges)",
    description:
      "Takes no `Idempotency-Key`: a request with one is a 400 naming it, before anything is stored (a retry would append the exchanges again, so the key is refused rather than ignored). To import idempotently, import into a new conversation (POST /v1/conversations/import takes a key).",
    responses: {
      201: { description: "The stored messages' ids and seqs", schema: imported },
      400: { description: "A bad body, or an Idempotency-Key (this route takes none)", schema: errorSchema },
    },
  }),
  ...jsonBody(importBody),
  async (c) => {
    const id = c.req.param("id") ?? "";
    if (!isId("conv", id)) throw notFound("conversation");
    // Appending is not idempotent here (nothing ties a retry to what the first request stored), so
    // a key is refused, never silently ignored: a retry under it would append the exchanges twice.
    if (c.req.header("idempotency-key") !== undefined)
      throw badRequest(
        "Idempotency-Key: not taken by this route (a retry would append the exchanges again); send without it, or import into a new conversation with POST /v1/conversations/import, which takes one",
      );
    const stub = c.env.CONVERSATION.get(c.env.CONVERSATION.idFromName(id));
    // The RPC stub's type loses StoredMessage (its `unknown` tool inputs are not provably serializable): named again here.
    const stored = (await stub.importMessages(
      { tenantId: c.get("tenantId"), conversationId: id },
      c.req.valid("json").messages,
    )) as ImportAnswer;
    if (stored.kind === "missing") throw notFound("conversation");
    if (stored.kind === "refused") throw new ApiError(409, "turn_paused", stored.message);
    return c.json({ messages: stored.messages.map(({ id, seq, role }) => ({ id, seq, role })) }, 201);
  },
);
