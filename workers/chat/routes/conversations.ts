// /v1/conversations: create, list, read, patch, the transcript, turns, replay and websockets.
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { isId } from "../../../core/ids";
import { describeZodError } from "../../../core/validation";
import { requestLocationHint } from "../location-hint";
import { settingsPatchSchema } from "../../../core/settings";
import { conversationTurnBodySchema } from "../../../core/turn-input";
import type { ConversationDO } from "../../../durable-objects/conversation/conversation-do";
import type { ConversationRef } from "../../../services/record/conversation-head";
import {
  createConversation,
  createKeyedConversation,
  keyedConversation,
} from "../../../durable-objects/conversation-create";
import { requestFingerprint } from "../../../core/idempotency-key";
import { promptSnapshotKey } from "../../../r2-layout";
import { getProject } from "../../../services/projects";
import { attachmentRoutes } from "./attachments";
import { importExchangesRoutes } from "./import-exchanges";
import { toolResultRoutes } from "./tool-results";
import { turnStopRoutes } from "./turn-stop";
import { importNewConversationRoutes } from "./import-new-conversation";
import { conversationExportRoutes } from "./conversation-export";
import {
  activityCursor,
  listConversationRows,
  listConversationRowsByActivity,
  parseActivityCursor,
} from "../../../services/conversation-list";
import { ApiError, badRequest, notFound, typeForStatus } from "../errors";
import { idempotencyKeyHeader, keyedAnswer } from "../idempotency-header";
import { regenerateInput, requireModel, respondTurn, startTurn, turnInput } from "../turns";
import type { AppEnv } from "../types";
import { listBody, pageOf } from "../paging";
import { intParam, jsonBody, query, visibleName } from "../validate";
import { issueTicket } from "../ws-tickets";
import { wroteElsewhere } from "../d1-session";
import { cortexFor } from "../../../services/cortex/routing";
import { answerCortexBookmark } from "./search";
import { cortexBookmarkAnswer, doc } from "../openapi/registry";
import {
  conversationListItemSchema,
  conversationSchema,
  errorSchema,
  listOf,
  replaySchema,
  storedMessageSchema,
  timelineCardSchema,
} from "../openapi/schemas";
import { turnDoc } from "../openapi/turn-doc";

export const conversationRoutes = new Hono<AppEnv>();
// Before the `/:id` routes, so "import" is never read as a conversation id.
conversationRoutes.route("/import", importNewConversationRoutes);

// A title is shown in lists and may be quoted to the model: the rule project names follow. An
// imported conversation's title is the import route's own (import-new-conversation.ts), unchanged.
const title = visibleName;
const createBody = z.strictObject({
  title: title.optional(),
  settings: settingsPatchSchema.optional(),
  projectId: z
    .string()
    .refine((v) => isId("proj", v), "not a project id")
    .optional(),
});
const patchBody = z
  .strictObject({ title: title.optional(), settings: settingsPatchSchema.optional() })
  .refine((b) => b.title !== undefined || b.settings !== undefined, "give title or settings");
// `order=created` (the default): newest created first, the cursor a conversation id.
// `order=activity`: most recent activity first, the cursor `<updatedAt>~<id>` (services/conversation-list.ts).
const listQuery = z
  .strictObject({
    limit: intParam(1, 100).default(20),
    order: z.enum(["created", "activity"]).default("created"),
    cursor: z.string().max(200).optional(),
  })
  .superRefine((q, ctx) => {
    if (q.cursor === undefined) return;
    const ok = q.order === "activity" ? parseActivityCursor(q.cursor) !== null : isId("conv", q.cursor);
    if (!ok)
      ctx.addIssue({
        code: "custom",
        path: ["cursor"],
        message:
          q.order === "activity"
            ? "not an order=activity cursor (pass back the `next` of the previous page)"
            : "not a conversation id",
      });
  });
// `after` (a seq) is the cursor these routes always took; `cursor` is its name on every other list.
const seqPageQuery = z
  .strictObject({
    after: intParam(0, Number.MAX_SAFE_INTEGER).optional(),
    cursor: intParam(0, Number.MAX_SAFE_INTEGER).optional(),
    limit: intParam(1, 500).default(100),
  })
  .refine((q) => q.after === undefined || q.cursor === undefined, {
    message: "give after or cursor, not both",
    path: ["cursor"],
  })
  .transform(({ after, cursor, limit }) => ({ after: cursor ?? after ?? 0, limit }));
// The socket route checks its query itself, after the upgrade and ticket checks: the same schema
// documents `after`; `ticket` (spent by authentication, app.ts) is the one other parameter it takes.
const wsAfter = z.string().regex(/^\d{1,15}$/, "a message seq (an integer >= 0)");
const wsQuery = z.strictObject({ after: wsAfter.optional() });
const wsQueryRead = wsQuery.extend({ ticket: z.string().optional() });
const promptsQuery = z.strictObject({
  limit: intParam(1, 50).default(50),
  cursor: intParam(1, Number.MAX_SAFE_INTEGER).optional(),
});

const conversation = conversationSchema;

function stubFor(
  env: Env,
  tenantId: string,
  id: string,
): {
  stub: DurableObjectStub<import("../../../durable-objects/conversation/conversation-do").ConversationDO>;
  ref: ConversationRef;
} {
  // A malformed id is indistinguishable from an unknown one: 404, and no object is woken.
  if (!isId("conv", id)) throw notFound("conversation");
  return { stub: env.CONVERSATION.get(env.CONVERSATION.idFromName(id)), ref: { tenantId, conversationId: id } };
}

conversationRoutes.post(
  "/",
  doc({
    summary: "Create a conversation",
    headers: [
      {
        name: "Idempotency-Key",
        description:
          "Resend with the same key and body: the conversation the key created is answered again (201), never a second one (24 h, per tenant); another body under the key is a 422.",
      },
    ],
    responses: {
      201: {
        description: "Created (or, for a key already used, the conversation it created: idempotent-replayed)",
        schema: conversation,
      },
      404: { description: "The conversation this Idempotency-Key created was deleted", schema: errorSchema },
      409: {
        description: "The create holding this Idempotency-Key has not finished (idempotency_in_progress, Retry-After)",
        schema: errorSchema,
      },
      422: {
        description: "This Idempotency-Key came with another request (idempotency_key_reused)",
        schema: errorSchema,
      },
    },
  }),
  ...jsonBody(createBody),
  async (c) => {
    const body = c.req.valid("json");
    const tenantId = c.get("tenantId");
    const key = idempotencyKeyHeader(c);
    // The key is looked at before anything else: a retry answers what the first request made,
    // even if what that request was checked against (its project, the settings) changed since.
    const createKey = key === undefined ? undefined : { key, fingerprint: await requestFingerprint(body) };
    const earlier = createKey && (await keyedConversation(c.env, tenantId, createKey));
    if (earlier) return keyedAnswer(c, earlier);
    if (body.projectId && !(await getProject(c.env.DB, tenantId, body.projectId)))
      throw badRequest("projectId: no such project");
    const request = { tenantId, init: body, locationHint: requestLocationHint(c.req.raw) };
    const created = createKey
      ? await createKeyedConversation(c.env, { ...request, createKey })
      : await createConversation(c.env, request);
    if (created.kind === "invalid") throw badRequest(created.message);
    if (created.kind === "created") return c.json(created.view, 201);
    return keyedAnswer(c, created);
  },
);

conversationRoutes.get(
  "/",
  doc({
    summary: "List conversations",
    description:
      "Newest created first; `?order=activity`: most recent activity first (`updatedAt`: the last turn, import, attachment note or rename), ties by id. Pass `next` back as `cursor` with the same `order`.",
    responses: {
      200: {
        description: "A page, newest first (or by activity)",
        schema: listOf(conversationListItemSchema),
      },
    },
  }),
  query(listQuery),
  async (c) => {
    const { limit, cursor, order } = c.req.valid("query");
    const tenantId = c.get("tenantId");
    if (order === "activity") {
      const rows = (
        await listConversationRowsByActivity(c.env.DB, {
          tenantId,
          limit: limit + 1,
          after: cursor === undefined ? undefined : parseActivityCursor(cursor)!,
        })
      ).map(({ tenantId: _t, ...row }) => row);
      return c.json(listBody(pageOf(rows, limit, activityCursor)));
    }
    const rows = (await listConversationRows(c.env.DB, { tenantId, limit: limit + 1, before: cursor })).map(
      ({ tenantId: _t, ...row }) => row,
    );
    return c.json(listBody(pageOf(rows, limit, (r) => r.id)));
  },
);

conversationRoutes.get(
  "/:id",
  doc({ summary: "Get a conversation", responses: { 200: { description: "The conversation", schema: conversation } } }),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    const view = await stub.getMeta(ref);
    if (!view) throw notFound("conversation");
    return c.json(view);
  },
);

conversationRoutes.patch(
  "/:id",
  doc({
    summary: "Rename or change settings",
    responses: { 200: { description: "The conversation", schema: conversation } },
  }),
  ...jsonBody(patchBody),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    const result = await stub.patch(ref, c.req.valid("json"));
    if (result.kind === "missing") throw notFound("conversation");
    if (result.kind === "invalid") throw badRequest(result.message);
    if (result.kind === "busy") throw new ApiError(409, "turn_in_progress", result.message);
    return c.json(result.view);
  },
);

/** Deletes the conversation and everything it owns, irreversibly (durable-objects/conversation/conversation-delete.ts). */
conversationRoutes.delete(
  "/:id",
  doc({
    summary: "Delete a conversation and everything it owns",
    responses: { 204: { description: "Deleted", headers: cortexBookmarkAnswer } },
  }),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    // The purge writes D1 on the object's binding, which names no bookmark: the answer reads the
    // primary's position after it (a purge cut short by an error included).
    wroteElsewhere(c, null);
    if (!(await stub.delete(ref))) throw notFound("conversation");
    // The object purged the conversation's cortex rows before answering (its RPC returns no
    // bookmark): the shard's primary position now is at or after that purge.
    answerCortexBookmark(c, await (await cortexFor(c.env, ref.tenantId)).primaryMark());
    return c.body(null, 204);
  },
);

conversationRoutes.get(
  "/:id/messages",
  doc({
    summary: "The transcript, by seq (the resume cursor: pass `next` as `cursor`)",
    responses: { 200: { description: "A page of messages", schema: listOf(storedMessageSchema) } },
  }),
  query(seqPageQuery),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    const { after, limit } = c.req.valid("query");
    // The RPC stub types a message's content blocks as unserializable (never): read the DO's own type.
    const page = (await stub.listMessages(ref, after, limit)) as Awaited<ReturnType<ConversationDO["listMessages"]>>;
    if (!page) throw notFound("conversation");
    return c.json(listBody({ data: page.messages, next: page.next }));
  },
);

conversationRoutes.post(
  "/:id/messages",
  turnDoc("Send a turn", { idempotent: true }),
  ...jsonBody(conversationTurnBodySchema),
  requireModel,
  async (c) => {
    const { ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    const idempotencyKey = idempotencyKeyHeader(c);
    const body = c.req.valid("json");
    // A regenerate carries no content: the runner saves the last prompt's again.
    const input = body.regenerate
      ? await regenerateInput(body.tools)
      : await turnInput(c.env, ref.tenantId, { ...body, content: body.content! });
    const started = await startTurn(c.env, ref, {
      ...input,
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    });
    if (started.kind === "missing") throw notFound("conversation");
    return respondTurn(c, { conversationId: ref.conversationId, events: started.events, replayed: started.replayed });
  },
);

conversationRoutes.get(
  "/:id/replay",
  doc({
    summary: "What the model sees next: summary, stubs and tail",
    responses: { 200: { description: "The replay", schema: replaySchema } },
  }),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    const replay = await stub.replay(ref);
    if (!replay) throw notFound("conversation");
    // The view's JSON, streamed from the object: a view may be larger than an RPC value may be.
    return c.body(replay, 200, { "content-type": "application/json" });
  },
);

conversationRoutes.get(
  "/:id/timeline",
  doc({
    summary: "Timeline cards (compactions, model changes), by card id",
    description:
      "The cards History shows among the messages, oldest first; no messages (those are GET /messages). Paged by card id: `after` (or `cursor`) and `next` are card ids, not seqs; a card's `afterSeq` places it after that message.",
    responses: { 200: { description: "A page of cards", schema: listOf(timelineCardSchema) } },
  }),
  query(seqPageQuery),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    const { after, limit } = c.req.valid("query");
    const page = (await stub.timeline(ref, after, limit)) as Awaited<ReturnType<ConversationDO["timeline"]>>;
    if (!page) throw notFound("conversation");
    return c.json(listBody({ data: page.cards, next: page.next }));
  },
);

conversationRoutes.get(
  "/:id/prompts",
  doc({
    summary: "List prompt snapshots",
    responses: {
      200: { description: "A page of snapshots", schema: listOf(z.looseObject({ id: z.number() })) },
    },
  }),
  query(promptsQuery),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    const { limit, cursor } = c.req.valid("query");
    const snapshots = await stub.promptSnapshots(ref, limit + 1, cursor);
    if (!snapshots) throw notFound("conversation");
    return c.json(pageOf(snapshots, limit, (s) => s.id));
  },
);

conversationRoutes.get(
  "/:id/prompts/:snapshot",
  doc({
    summary: "One prompt snapshot: the exact request sent to the model",
    responses: { 200: { description: "The snapshot", schema: z.looseObject({}) } },
  }),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    const raw = c.req.param("snapshot");
    const n = /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : 0;
    if (n < 1 || !(await stub.getMeta(ref))) throw notFound("prompt snapshot");
    const obj = await c.env.BUCKET.get(promptSnapshotKey(ref.tenantId, ref.conversationId, n));
    if (!obj) throw notFound("prompt snapshot");
    return new Response(obj.body, { headers: { "content-type": "application/json" } });
  },
);

conversationRoutes.post(
  "/:id/ws-ticket",
  doc({
    summary: "A single-use websocket ticket (for browsers)",
    responses: {
      201: {
        description: "The ticket",
        schema: z.looseObject({
          ticket: z.string(),
          expiresAt: z.string().meta({ description: "When the ticket stops opening the socket, unused (ISO 8601)" }),
        }),
      },
    },
  }),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    if (!(await stub.getMeta(ref))) throw notFound("conversation");
    return c.json(
      await issueTicket(c.env.DB, {
        tenantId: ref.tenantId,
        conversationId: ref.conversationId,
        now: Date.now(),
        keyHash: c.get("keyHash") ?? null,
      }),
      201,
    );
  },
);

conversationRoutes.get(
  "/:id/ws",
  doc({
    summary: "The conversation's websocket",
    description:
      "Upgrade to a websocket (with the API key, or `?ticket=`). `?after=<seq>` resumes: the saved messages after that seq, then a `resumed` frame, then live frames. Frames are JSON text: SocketClientFrame in, SocketServerFrame out (see x-websocket).",
    query: wsQuery,
    responses: { 101: { description: "Switching protocols" } },
    extensions: {
      "x-websocket": {
        clientFrames: { $ref: "#/components/schemas/SocketClientFrame" },
        serverFrames: { $ref: "#/components/schemas/SocketServerFrame" },
        resumeQuery: "after",
      },
    },
  }),
  async (c) => {
    const { stub, ref } = stubFor(c.env, c.get("tenantId"), c.req.param("id"));
    const ticketFor = c.get("ticketConversation");
    if (ticketFor !== undefined && ticketFor !== ref.conversationId) throw notFound("conversation");
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket")
      throw new ApiError(426, "upgrade_required", "this route needs a websocket upgrade");
    // As query() reads a query string (validate.ts): a repeated parameter is an array, so a 400
    // like every other route's, and so is an unknown one.
    const given = Object.entries(c.req.queries()).map(([k, v]) => [k, v.length === 1 ? v[0] : v]);
    const read = wsQueryRead.safeParse(Object.fromEntries(given));
    if (!read.success) throw badRequest(describeZodError(read.error));
    if (!(await stub.getMeta(ref))) throw notFound("conversation");
    const headers = new Headers(c.req.raw.headers);
    headers.delete("authorization");
    headers.set("x-tenant-id", ref.tenantId);
    headers.set("x-conversation-id", ref.conversationId);
    // Turns sent over the socket count against the key that opened it (hashed, never the key).
    headers.delete("x-rate-key");
    const keyHash = c.get("keyHash");
    if (keyHash) headers.set("x-rate-key", keyHash);
    const answer = await stub.fetch(new Request(c.req.url, { headers }));
    if (answer.status === 101) return answer;
    // The object refuses an upgrade in plain text (a delete that landed since getMeta): answered here
    // in the API's error shape, as the route's own refusals are.
    await answer.body?.cancel();
    throw socketRefusal(answer.status);
  },
);

/** The conversation object's refusal of a websocket upgrade (sockets.ts) as the API error it stands for. */
function socketRefusal(status: number): ApiError {
  if (status === 404) return notFound("conversation");
  if (status === 426) return new ApiError(426, "upgrade_required", "this route needs a websocket upgrade");
  const code = status >= 400 && status <= 599 ? (status as ContentfulStatusCode) : 500;
  return new ApiError(code, typeForStatus(code), "the websocket could not be opened; retry");
}

conversationRoutes.route("/:id/attachments", attachmentRoutes);
conversationRoutes.route("/:id/import", importExchangesRoutes);
conversationRoutes.route("/:id/export", conversationExportRoutes);
conversationRoutes.route("/:id/tool-results", toolResultRoutes);
conversationRoutes.route("/:id/stop", turnStopRoutes);
