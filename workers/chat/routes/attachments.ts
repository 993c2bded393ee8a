// /v1/conversations/:id/attachments: uploads streamed into R2 (a single request, or R2's
// multipart API for files larger than one request allows), each becoming a reference note in
// the conversation. Content never enters a request; tools read it on demand.
import { Hono } from "hono";
import { z } from "zod";
import { attachmentNote, TOOLS_FOR, type AttachmentFacts } from "../../../services/attachments/note";
import { isId, sortableId } from "../../../core/ids";
import { attachmentBlobKey } from "../../../r2-layout";
import type { ConversationDO } from "../../../durable-objects/conversation/conversation-do";
import { attachmentToDelete, purgeAttachment } from "../../../services/attachments/delete";
import { inspectAttachment } from "../../../services/attachments/inspect";
import { textViewFor } from "../../../services/attachments/text-view";
import { r2RangeReader } from "../../../services/attachments/r2-range-reader";
import {
  finishAttachment,
  getAttachmentRow,
  insertAttachment,
  listAttachmentRows,
  toAttachment,
  type AttachmentRow,
} from "../../../services/attachments/store";
import { PROJECT_FULL } from "../../../services/projects";
import { cortexFor } from "../../../services/cortex/routing";
import { ApiError, badRequest, notFound } from "../errors";
import { answerCortexBookmark } from "./search";
import type { AppEnv } from "../types";
import { idCursor, listBody, pageOf } from "../paging";
import { intParam, jsonBody, query } from "../validate";
import { cortexBookmarkAnswer, doc } from "../openapi/registry";
import { listOf, resource } from "../openapi/schemas";
import {
  completeParts,
  contentLength,
  createUpload,
  multipartDocs,
  NAME,
  openUpload,
  putPart,
  startUpload,
  uploadedParts,
} from "./multipart-upload";

const attachment = resource("Attachment", "An uploaded file: name, type, size, facts and its reference note.");

export const attachmentRoutes = new Hono<AppEnv>();

/**
 * `attach=false` stages the file: stored and inspected, but its note does not join the
 * conversation until a turn names it in `attachments` (the web UI's composer sends it that way).
 */
const uploadQuery = z.strictObject({
  name: NAME,
  attach: z.enum(["true", "false"], { message: 'must be "true" or "false"' }).optional(),
});
const listQuery = z.strictObject({ limit: intParam(1, 500).default(100), cursor: idCursor("att", "an attachment id") });
const completeUpload = z.strictObject({
  parts: uploadedParts,
  // As a single upload's `attach=false`: the file is staged until a turn names it.
  attach: z.boolean().optional(),
});

const conversationObject = (env: Env, conversationId: string) =>
  env.CONVERSATION.get(env.CONVERSATION.idFromName(conversationId));

async function conversationFor(c: { env: Env; get(k: "tenantId"): string; req: { param(k: "id"): string } }) {
  const tenantId = c.get("tenantId");
  const conversationId = c.req.param("id");
  if (!isId("conv", conversationId)) throw notFound("conversation");
  const stub = conversationObject(c.env, conversationId);
  if (!(await stub.getMeta({ tenantId, conversationId }))) throw notFound("conversation");
  return { tenantId, conversationId, stub };
}

type ConversationRef = { tenantId: string; conversationId: string };

/** Whether the conversation is gone now (its delete begun); a failed ask says it is not, and the caller's own error stands. */
const conversationGone = (stub: ConversationStub, ref: ConversationRef) =>
  stub.getMeta(ref).then(
    (meta) => meta === null,
    () => false,
  );

/**
 * A conversation's file work, its failure told again once the conversation is asked. The
 * conversation's delete landing while the work ran removes the file's row, bytes and open upload
 * under it, so the work fails in the file's own words (R2's "no such upload", the upload not
 * found): what went is the conversation, and the answer is its 404, as the same request sent a
 * moment later gets (as a project's file routes answer, whileProjectLives in projects.ts).
 */
async function whileConversationLives<T>(stub: ConversationStub, ref: ConversationRef, work: () => Promise<T>) {
  try {
    return await work();
  } catch (err) {
    if (await conversationGone(stub, ref)) throw notFound("conversation");
    throw err;
  }
}

/**
 * finishUpload's `gone` for a conversation's upload: what went while it ran, the conversation (its
 * delete swept the file) or the file itself (its DELETE, an abort, the abandoned-upload sweep), as
 * the 404 of what is missing: `missing` names the file as its routes do ("upload" for a multipart
 * one, whose complete sent again finds no upload). Null while both are there.
 */
const uploadGone =
  (
    env: Env,
    { stub, row, missing }: { stub: ConversationStub; row: AttachmentRow; missing: "attachment" | "upload" },
  ) =>
  async (): Promise<ApiError | null> => {
    if (await conversationGone(stub, { tenantId: row.tenantId, conversationId: row.conversationId }))
      return notFound("conversation");
    return (await getAttachmentRow(env.DB, row.tenantId, row.id)) ? null : notFound(missing);
  };

/**
 * The note's call failed without an answer (its reply lost after the object saved the note, or the
 * call itself): the note may be in the transcript, and a note must never name a purged file, so the
 * file stays, ready (listed, deletable, a turn may name it), and the answer says so. Callers purge
 * an upload on any other error, never on this one.
 */
export class NoteUnconfirmed extends ApiError {
  constructor(attachmentId: string) {
    super(
      502,
      "storage_error",
      `attachment ${attachmentId} is kept, but the conversation did not confirm its note: the transcript shows whether it joined (a turn naming the attachment in attachments brings it; a DELETE removes the file)`,
    );
  }
}

type ConversationStub = DurableObjectStub<ConversationDO>;

/**
 * An error the Durable Object's method threw and answered (workerd marks it `remote`), as opposed
 * to a call whose answer never came (a lost connection, an object reset mid-call).
 */
const thrownByObject = (err: unknown): boolean => {
  const e = err as { remote?: unknown; durableObjectReset?: unknown } | null;
  return e?.remote === true && e.durableObjectReset !== true;
};

async function addNote(
  stub: ConversationStub,
  add: { ref: { tenantId: string; conversationId: string }; note: string; tools: readonly string[] },
  attachmentId: string,
) {
  try {
    const { kind } = await stub.addAttachmentNote(add.ref, add.note, add.tools);
    if (kind === "unconfirmed") throw new NoteUnconfirmed(attachmentId);
    return kind;
  } catch (err) {
    if (err instanceof NoteUnconfirmed) throw err;
    // The object's own method failed (an error it threw, its storage intact): it saved no note, as
    // it keeps none it could not finish, and the caller purges the file.
    if (thrownByObject(err)) throw err;
    console.error("attachment note unconfirmed", attachmentId, err);
    throw new NoteUnconfirmed(attachmentId);
  }
}

/**
 * Inspects the stored bytes, records the facts, and adds the note to the conversation (a project
 * file has no conversation: its project's conversations list it in their prompt instead).
 */
export async function finish(env: Env, row: AttachmentRow, stub: ConversationStub | null) {
  const reader = await r2RangeReader(env.BUCKET, row.r2Key);
  if (!reader) throw new Error("the upload's bytes are missing");
  const { type, facts } = await inspectAttachment(reader, {
    name: row.name,
    declaredType: row.type,
    text: () =>
      textViewFor(env.BUCKET, {
        tenantId: row.tenantId,
        attachmentId: row.id,
        blobKey: row.r2Key,
        exists: async () => (await getAttachmentRow(env.DB, row.tenantId, row.id)) !== null,
      }),
  });
  const ready: AttachmentRow = {
    ...row,
    type,
    size: reader.size,
    status: "ready",
    facts: JSON.stringify(facts),
    uploadId: null,
  };
  const kept = await finishAttachment(env.DB, {
    tenantId: row.tenantId,
    id: row.id,
    change: {
      type,
      size: reader.size,
      status: "ready",
      facts: ready.facts,
      uploadId: null,
    },
  });
  // A project's file with no room left (files racing for its last places): the caller purges it.
  if (kept === "full") throw new ApiError(409, "conflict", PROJECT_FULL);
  if (kept === "missing") {
    // Another complete of the same upload made it ready first: that file is this one. Else it was
    // deleted while its bytes arrived (the attachment, or its conversation): the caller purges them.
    const done = await readyByAnother(env, row);
    if (!done) throw notFound("attachment");
    return done;
  }
  const attachment = toAttachment(ready);
  const note = attachmentNote(attachment);
  // A conversation deleted during the upload takes no note; the caller discards the file.
  const ref = { tenantId: row.tenantId, conversationId: row.conversationId };
  if (
    stub &&
    (await addNote(stub, { ref, note, tools: TOOLS_FOR[(facts as AttachmentFacts).kind] }, row.id)) === "missing"
  )
    throw notFound("conversation");
  // A staged file (no note yet) is asked after too: one whose conversation's delete purged the
  // attachments before its row landed would be listed nowhere and deleted by nothing.
  if (!stub && row.conversationId && !(await conversationObject(env, row.conversationId).getMeta(ref)))
    throw notFound("conversation");
  return { ...attachment, note };
}

/**
 * A multipart upload's row that another complete of it made ready first: the same complete sent
 * twice at once, or sent again after a 502 while the first was still finishing. R2 joined the parts
 * once and the file is this one, so it is answered as that complete answers it (its note added
 * there, never twice) and never purged: the purge would take the file that complete answered 201
 * for and its note names. Its conversation is asked all the same: one whose delete began takes the
 * file, and the answer is its 404, as the first complete's is; a failed ask is no reason to purge
 * it. Null when the row is not ready (deleted, or claimed by the sweep, meanwhile).
 */
async function readyByAnother(env: Env, row: AttachmentRow) {
  if (!row.uploadId) return null;
  const now = await getAttachmentRow(env.DB, row.tenantId, row.id);
  if (now?.status !== "ready") return null;
  const ref = { tenantId: row.tenantId, conversationId: row.conversationId };
  if (row.conversationId && (await conversationGone(conversationObject(env, row.conversationId), ref)))
    throw notFound("conversation");
  const attachment = toAttachment(now);
  return { ...attachment, note: attachmentNote(attachment) };
}

export function newRow(of: {
  tenantId: string;
  conversationId: string;
  name: string;
  type: string | null;
  status: string;
  projectId?: string | null;
}): AttachmentRow {
  const { tenantId, conversationId, name, type, status, projectId = null } = of;
  const id = sortableId("att");
  const now = new Date().toISOString();
  return {
    id,
    tenantId,
    conversationId,
    name,
    type: type || "application/octet-stream",
    size: 0,
    status,
    r2Key: attachmentBlobKey(tenantId, id),
    uploadId: null,
    facts: "{}",
    createdAt: now,
    updatedAt: now,
    indexStatus: "none",
    indexStartedAt: null,
    projectId,
  };
}

/**
 * A single-request upload: the body streams straight into R2 (the Worker never holds it whole),
 * then the bytes are inspected and recorded. Any failure removes every trace of it, but one that
 * leaves its note unconfirmed (the file is kept, as the note may name it).
 */
export async function storeUpload(
  env: Env,
  upload: { req: Request; row: AttachmentRow; stub: Parameters<typeof finish>[2]; gone?: UploadGone },
) {
  const { req, row, stub, gone } = upload;
  const length = contentLength(req.headers.get("content-length") ?? undefined);
  await insertAttachment(env.DB, row);
  return finishUpload(env, {
    row,
    stub,
    gone,
    stored: async () => {
      const stored = await env.BUCKET.put(row.r2Key, req.body, { httpMetadata: { contentType: row.type } });
      if (!stored || stored.size !== length) throw badRequest(`body: received ${stored?.size ?? 0} of ${length} bytes`);
    },
  });
}

/**
 * An upload's end, single or multipart: `stored` puts its bytes in place (the body written, the
 * parts joined), then `finish`. Nothing is left half-written: any failure removes every trace of the
 * upload (but a file its note may name, NoteUnconfirmed), except a multipart complete's refusal,
 * which leaves the upload and its parts for the same complete sent again.
 * `gone`, asked once the upload failed, says whether what it belongs to went meanwhile (a delete
 * removes the row, bytes and open upload, and the upload then fails for want of them, a 500 or R2's
 * "no such upload"): its 404 is the answer instead. It is asked before the upload's own purge,
 * which removes the row it looks for; when the ask fails, the failure stands.
 */
export async function finishUpload(
  env: Env,
  {
    row,
    stub,
    stored,
    gone,
  }: { row: AttachmentRow; stub: Parameters<typeof finish>[2]; stored: () => Promise<void>; gone?: UploadGone },
) {
  const told = async (err: unknown) => (gone ? await gone().catch(() => null) : null) ?? err;
  try {
    await stored();
  } catch (err) {
    const answer = await told(err);
    if (!row.uploadId) await purgeAttachment(env, row);
    throw answer;
  }
  try {
    return await finish(env, row, stub);
  } catch (err) {
    const answer = await told(err);
    // A file its note may name is kept, unless it went, or its conversation (the note with it).
    if (!(err instanceof NoteUnconfirmed) || answer !== err) await purgeAttachment(env, row);
    throw answer;
  }
}

/** What went while an upload ran, as its 404, or null (finishUpload's `gone`). */
type UploadGone = () => Promise<ApiError | null>;

export const declaredType = (header: string | undefined) => (header ?? "").split(";")[0].trim() || null;

attachmentRoutes.post(
  "/",
  doc({
    summary: "Upload a file (the body is its bytes)",
    rawBody: { description: "The file's bytes; Content-Length required" },
    responses: { 201: { description: "The attachment and its note", schema: attachment } },
  }),
  query(uploadQuery),
  async (c) => {
    const { tenantId, conversationId, stub } = await conversationFor(c);
    const { name, attach } = c.req.valid("query");
    const row = newRow({
      tenantId,
      conversationId,
      name,
      type: declaredType(c.req.header("content-type")),
      status: "uploading",
    });
    // A staged file (attach=false) gets no note now: the turn that names it brings the note.
    const file = await storeUpload(c.env, {
      req: c.req.raw,
      row,
      stub: attach === "false" ? null : stub,
      gone: uploadGone(c.env, { stub, row, missing: "attachment" }),
    });
    return c.json(file, 201);
  },
);

attachmentRoutes.get(
  "/",
  doc({
    summary: "List the conversation's attachments",
    responses: { 200: { description: "A page", schema: listOf(attachment) } },
  }),
  query(listQuery),
  async (c) => {
    const { tenantId, conversationId } = await conversationFor(c);
    const { limit, cursor } = c.req.valid("query");
    const rows = (
      await listAttachmentRows(c.env.DB, { tenantId, conversationId, limit: limit + 1, after: cursor })
    ).map(toAttachment);
    return c.json(
      listBody(
        pageOf(
          rows.map((a) => ({ ...a, note: attachmentNote(a) })),
          limit,
          (a) => a.id,
        ),
      ),
    );
  },
);

attachmentRoutes.get(
  "/:attachmentId",
  doc({ summary: "Get an attachment", responses: { 200: { description: "The attachment", schema: attachment } } }),
  async (c) => {
    const { tenantId, conversationId } = await conversationFor(c);
    const row = await getAttachmentRow(c.env.DB, tenantId, c.req.param("attachmentId"));
    if (!row || row.conversationId !== conversationId || row.status !== "ready") throw notFound("attachment");
    const a = toAttachment(row);
    const pagesIndexed =
      a.facts.kind === "pdf" ? await (await cortexFor(c.env, tenantId)).countIndexedPages(tenantId, row.id) : undefined;
    return c.json({ ...a, note: attachmentNote(a), indexStatus: row.indexStatus, pagesIndexed });
  },
);

/** The bytes as uploaded (export files link here), never rendered by the browser as a page of this origin. */
attachmentRoutes.get(
  "/:attachmentId/content",
  doc({
    summary: "Download an attachment's bytes",
    responses: {
      200: {
        description: "The file as uploaded, served with its stored media type (the attachment's `type`)",
        content: { "*/*": { schema: { type: "string", format: "binary" } } },
      },
    },
  }),
  async (c) => {
    const { tenantId, conversationId } = await conversationFor(c);
    const row = await getAttachmentRow(c.env.DB, tenantId, c.req.param("attachmentId"));
    if (!row || row.conversationId !== conversationId || row.status !== "ready") throw notFound("attachment");
    const obj = await c.env.BUCKET.get(row.r2Key);
    if (!obj) throw notFound("attachment");
    return new Response(obj.body, {
      headers: {
        "content-type": row.type,
        "content-length": String(obj.size),
        "content-disposition": `attachment; filename*=UTF-8''${filenameValue(row.name)}`,
        "x-content-type-options": "nosniff",
        "content-security-policy": "sandbox",
      },
    });
  },
);

/** Deletes the attachment: bytes, extracted pages, row. Its reference note stays in the transcript. */
attachmentRoutes.delete(
  "/:attachmentId",
  doc({
    summary: "Delete an attachment (its note stays)",
    responses: { 204: { description: "Deleted", headers: cortexBookmarkAnswer } },
  }),
  async (c) => {
    const { tenantId, conversationId, stub } = await conversationFor(c);
    const ref = { tenantId, conversationId };
    const mark = await whileConversationLives(stub, ref, async () => {
      // A delete cut short left the row or its tombstone: this one completes it.
      const row = await attachmentToDelete(c.env.DB, tenantId, c.req.param("attachmentId"));
      if (!row || row.conversationId !== conversationId) throw notFound("attachment");
      return purgeAttachment(c.env, row);
    });
    // The conversation's delete landed meanwhile: answered as the same DELETE sent after it is.
    if (await conversationGone(stub, ref)) throw notFound("conversation");
    // Its pages' removal reached the shard: the answer carries where, as a note's delete does.
    answerCortexBookmark(c, mark);
    return c.body(null, 204);
  },
);

// ---- multipart: create, parts, complete, abort (routes/multipart-upload.ts) ----------------

const multipart = multipartDocs({
  of: "",
  idField: "attachmentId",
  completed: { description: "The attachment and its note", schema: attachment },
});

attachmentRoutes.post("/uploads", doc(multipart.start), ...jsonBody(createUpload), async (c) => {
  const { tenantId, conversationId, stub } = await conversationFor(c);
  const body = c.req.valid("json");
  const { row, uploadId, minPartBytes } = await startUpload(c.env, {
    row: newRow({ tenantId, conversationId, name: body.name, type: body.type ?? null, status: "uploading" }),
    gone: async () => ((await stub.getMeta({ tenantId, conversationId })) ? null : notFound("conversation")),
  });
  return c.json({ attachmentId: row.id, uploadId, minPartBytes }, 201);
});

async function conversationUpload(
  c: Parameters<typeof conversationFor>[0] & { req: { param(k: "id" | "attachmentId"): string } },
) {
  const { tenantId, conversationId, stub } = await conversationFor(c);
  const ref = { tenantId, conversationId };
  // A delete of the conversation since the check above may have swept the upload's row.
  const open = await whileConversationLives(stub, ref, () =>
    openUpload(c.env, {
      tenantId,
      id: c.req.param("attachmentId"),
      owned: (row) => row.conversationId === conversationId,
    }),
  );
  return { ...open, stub, ref };
}

attachmentRoutes.put("/uploads/:attachmentId/parts/:part", doc(multipart.part), async (c) => {
  const { upload, stub, ref } = await conversationUpload(c);
  return c.json(
    await whileConversationLives(stub, ref, () => putPart(upload, { part: c.req.param("part"), req: c.req.raw })),
  );
});

attachmentRoutes.post(
  "/uploads/:attachmentId/complete",
  doc(multipart.complete),
  ...jsonBody(completeUpload),
  async (c) => {
    const { row, stub, upload } = await conversationUpload(c);
    const { parts, attach } = c.req.valid("json");
    const stored = () => completeParts(c.env.BUCKET, { upload, parts });
    const file = await finishUpload(c.env, {
      row,
      stub: attach === false ? null : stub,
      stored,
      gone: uploadGone(c.env, { stub, row, missing: "upload" }),
    });
    return c.json(file, 201);
  },
);

attachmentRoutes.delete("/uploads/:attachmentId", doc(multipart.abort), async (c) => {
  const { row, stub, ref } = await conversationUpload(c);
  await whileConversationLives(stub, ref, () => purgeAttachment(c.env, row));
  // The conversation's delete took the upload meanwhile: answered as the same abort sent after it is.
  if (await conversationGone(stub, ref)) throw notFound("conversation");
  return c.body(null, 204);
});

/**
 * A file name as `filename*`'s value (RFC 8187): UTF-8, percent-encoded outside attr-char.
 * encodeURIComponent leaves `'()*` as they are, and the apostrophe is the value's own delimiter.
 */
function filenameValue(name: string): string {
  return encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
