// R2 multipart uploads, for a file larger than one request allows: shared by a conversation's
// attachments (routes/attachments.ts) and a project's files (routes/projects.ts). Here: the bodies
// they take, the start (the row recorded with its upload), a part, a complete's refusals, and their
// OpenAPI descriptions. Each route checks its own owner (the conversation or the project) and
// finishes the file its own way.
import { z } from "zod";
import { NO_SUCH_UPLOAD, purgeAttachment, r2Code } from "../../../services/attachments/delete";
import { type AttachmentRow, getAttachmentRow, insertAttachment } from "../../../services/attachments/store";
import { ApiError, badRequest, notFound } from "../errors";
import type { ResponseDoc, RouteDoc } from "../openapi/registry";

/** A file's name: an attachment's or a project file's, of a single upload or a multipart one. */
export const NAME = z
  .string()
  .trim()
  .min(1)
  .max(200)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a file name is refused for
  .refine((v) => !/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069/\\]/.test(v), {
    message: "no slashes, control characters, line separators or bidi overrides",
  });

/** A media type (`type/subtype`, parameters allowed): it becomes the download's Content-Type header. */
const MEDIA_TYPE = z
  .string()
  .max(200)
  .regex(/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;[\x20-\x7E]*)?$/, "a media type such as text/plain");

/** The body of a start: the file's name and, optionally, its declared type. */
export const createUpload = z.strictObject({ name: NAME, type: MEDIA_TYPE.optional() });

/** A complete's `parts`, each once. */
export const uploadedParts = z
  .array(z.strictObject({ partNumber: z.number().int().min(1).max(10_000), etag: z.string().min(1).max(200) }))
  .min(1)
  .max(10_000)
  // R2 answers a part named twice with its internal error (10001): refused here as the request's fault.
  .superRefine((parts, ctx) => {
    const seen = new Set<number>();
    for (const { partNumber } of parts) {
      if (seen.has(partNumber)) {
        ctx.addIssue({ code: "custom", message: `part ${partNumber} is listed twice` });
        return;
      }
      seen.add(partNumber);
    }
  });

/** R2's least size of every part but the last (all of them the same size). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

export function contentLength(header: string | undefined): number {
  const n = Number(header);
  if (!header || !Number.isInteger(n) || n < 0)
    throw new ApiError(
      411,
      "length_required",
      "Content-Length is required; for a body of unknown length use the multipart upload API",
    );
  if (n === 0) throw badRequest("body: the upload is empty");
  return n;
}

/**
 * Starts the R2 upload and records its row (`uploading`, with the upload's id). `gone` is asked once
 * the row exists: an owner deleted since the route's own check may have purged its files before
 * this row landed, and nothing would ever remove it or abort the upload. When it answers an error
 * (or fails), the upload and its row go and that error is thrown.
 */
export async function startUpload(
  env: Env,
  { row, gone }: { row: AttachmentRow; gone: () => Promise<ApiError | null> },
): Promise<{ row: AttachmentRow; uploadId: string; minPartBytes: number }> {
  const upload = await env.BUCKET.createMultipartUpload(row.r2Key, { httpMetadata: { contentType: row.type } });
  const started = { ...row, uploadId: upload.uploadId };
  await insertAttachment(env.DB, started);
  const refused = await gone().catch(async (err: unknown) => {
    await purgeAttachment(env, started);
    throw err;
  });
  if (refused) {
    await purgeAttachment(env, started);
    throw refused;
  }
  return { row: started, uploadId: upload.uploadId, minPartBytes: MIN_PART_BYTES };
}

/**
 * The open upload `id` of the tenant, when `owned` says it is the route's (its conversation's or its
 * project's); anything else is a 404, as is another tenant's.
 */
export async function openUpload(
  env: Env,
  { tenantId, id, owned }: { tenantId: string; id: string; owned: (row: AttachmentRow) => boolean },
) {
  const row = await getAttachmentRow(env.DB, tenantId, id);
  if (!row || !owned(row) || row.status !== "uploading" || !row.uploadId) throw notFound("upload");
  return { row, upload: env.BUCKET.resumeMultipartUpload(row.r2Key, row.uploadId) };
}

/** One part, its number as the path has it (1 to 10000) and its bytes streamed into R2. */
export async function putPart(upload: R2MultipartUpload, { part, req }: { part: string; req: Request }) {
  const n = /^[1-9]\d{0,4}$/.test(part) ? Number(part) : 0;
  if (n < 1 || n > 10_000) throw badRequest("part: a number from 1 to 10000");
  contentLength(req.headers.get("content-length") ?? undefined);
  try {
    const uploaded = await upload.uploadPart(n, req.body!);
    return { partNumber: uploaded.partNumber, etag: uploaded.etag };
  } catch (err) {
    // An abort (or a complete, or the owner's delete) took the upload after the route read its row:
    // the answer the same PUT gets a moment later, not a 500.
    if (r2Code(err) === NO_SUCH_UPLOAD) throw notFound("upload");
    throw err;
  }
}

/**
 * Joins the parts into the object; a refusal as completeRefused says. R2's "no such upload" (10024)
 * to a complete whose object is already under the upload's key means R2 joined the parts before:
 * a complete whose answer was lost (answered a 502 that says to send it again), or the same complete
 * sent twice at once. That key is the file's alone and only this upload's complete writes it, so
 * the object is this upload's, and the caller finishes the file as if this complete had joined it.
 * With nothing there the upload is gone (aborted, swept, expired): the upload's 404, as a part sent
 * to it gets (putPart) and the same complete gets once its row is gone.
 */
export async function completeParts(
  bucket: R2Bucket,
  { upload, parts }: { upload: R2MultipartUpload; parts: R2UploadedPart[] },
): Promise<void> {
  try {
    await upload.complete(parts);
    return;
  } catch (err) {
    if (r2Code(err) !== NO_SUCH_UPLOAD) throw completeRefused(err);
  }
  // A failed look is storage's fault: the same complete sent again looks again.
  const joined = await bucket.head(upload.key).catch((err: unknown) => {
    throw storageFailed(err);
  });
  if (!joined) throw notFound("upload");
}

/**
 * R2's codes (at the end of its error's message) for a complete the request itself got wrong: a
 * part not found or with another etag, a part below the least size, parts out of order. Any other
 * failure is storage's, not the caller's: a 502 the same complete may be retried after, since the
 * upload and its parts stay.
 */
const CALLER_CODES = new Set(["10011", "10025", "10048"]);

function completeRefused(err: unknown): ApiError {
  const message = err instanceof Error ? err.message : String(err);
  const code = r2Code(err);
  if (code && CALLER_CODES.has(code)) return badRequest(`parts: the upload could not be completed (${message})`);
  return storageFailed(err);
}

/** Storage's failure, not the caller's: the upload and its parts stay for the same complete sent again. */
function storageFailed(err: unknown): ApiError {
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError(
    502,
    "storage_error",
    `the upload could not be completed: storage failed (${message}); its parts are kept, send the same complete again`,
  );
}

/**
 * The four routes' OpenAPI descriptions. `of`: what is uploaded, after the summary (empty for an
 * attachment); `idField`: the start's name for the file's id; `completed`: the complete's answer.
 */
export function multipartDocs({ of, idField, completed }: { of: string; idField: string; completed: ResponseDoc }) {
  const start: RouteDoc = {
    summary: `Start a multipart upload${of}`,
    responses: {
      201: {
        description: "The upload",
        schema: z.looseObject({ [idField]: z.string(), uploadId: z.string(), minPartBytes: z.number() }),
      },
    },
  };
  const part: RouteDoc = {
    summary: `Upload one part${of}`,
    rawBody: { description: "The part's bytes; Content-Length required" },
    responses: {
      200: { description: "The part", schema: z.looseObject({ partNumber: z.number(), etag: z.string() }) },
    },
  };
  const complete: RouteDoc = { summary: `Complete a multipart upload${of}`, responses: { 201: completed } };
  const abort: RouteDoc = {
    summary: `Abort a multipart upload${of}`,
    responses: { 204: { description: "Aborted" } },
  };
  return { start, part, complete, abort };
}
