// An import's first pass: the request body is read chunk by chunk, each message parsed and checked
// (shape, then tool pairing) as it arrives, and the valid ones staged in R2 in bounded chunks. No
// more than one message and one chunk are ever held. At most MAX_IMPORT_MESSAGES of them may be
// messages the model is sent (the Messages API's own limit, halved). Any problem removes what was
// staged, so a refused import leaves nothing behind; the conversation itself is only created from a
// complete, valid staging (durable-objects/conversation/transcript-import.ts). A request that dies
// before it removes its staging leaves a marker behind, and the cron tick sweeps it
// (sweepStagedImports).
import { sortableId } from "../../core/ids";
import {
  JsonlMessageScanner,
  JsonMessageScanner,
  ScanError,
  type RawMessage,
} from "../../core/transcript/message-scanner";
import { SupersededCheck } from "../../core/transcript/superseded";
import {
  ExportLines,
  PairingCheck,
  parseImportedMessage,
  TranscriptError,
  type ImportedMessage,
} from "../../core/transcript/transcript-check";
import {
  importStagingKey,
  importStagingPrefix,
  parseStagedImportMarkerKey,
  stagedImportMarkerKey,
  stagedImportMarkerPrefix,
} from "../../r2-layout";
import { withRetry } from "../record/retry";

/** A chunk is one R2 object and, later, one message batch of the conversation. */
export const IMPORT_CHUNK_MESSAGES = 500;
const IMPORT_CHUNK_CHARS = 4_000_000;
/** A turn's body, and a client's post of tool results: at most this many bytes (workers/chat/app.ts). */
export const TURN_BODY_BYTES = 12 * 1024 * 1024;
/**
 * Workers' cap on one RPC value, serialized. A stored message crosses RPC in a page of
 * GET …/messages (TRANSCRIPT_PAGE_BYTES), alone when it is larger than a page, and a string
 * serializes in at most 2 bytes a character.
 */
const RPC_VALUE_BYTES = 32 * 1024 * 1024;
/** What a page adds around the one message it carries (its other fields, the RPC framing). */
const PAGE_ROOM_BYTES = 64 * 1024;
/**
 * The largest single message. The largest the platform writes itself is a step's results: the
 * client's (a post of up to TURN_BODY_BYTES, stored as it came with a `type` added to each of at
 * most 64 results) and the server tools' of the same step, in one user message, so it may pass
 * TURN_BODY_BYTES and its own export must still import. It may be as large as a message that is
 * still read back alone in one page: a whole post of client results and about 4 Mi characters of
 * server results beside it. A larger step (dozens of maximal server results) is the one message
 * left over, and its page already fails on the platform itself (docs/api-notes.md). The scanner
 * holds one message at a time, and staging holds it parsed, not also as text.
 */
export const MAX_IMPORT_MESSAGE_CHARS = (RPC_VALUE_BYTES - PAGE_ROOM_BYTES) / 2;
/**
 * The largest transcript body, in bytes: a bound on the work and staging one request may cause,
 * and under every Workers plan's own request limit, so an import over it is always this API's 413.
 */
export const IMPORT_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * The most messages of a transcript the model is sent (not superseded, not a sub-agent's): half
 * the Messages API's limit of 100,000 messages a request (core/offline-model/rules/messages.ts),
 * so the turns after the import have room before folds shorten the replay. Over it, every later
 * turn would risk the API's 400, so the import is refused.
 */
export const MAX_IMPORT_MESSAGES = 50_000;

export type ImportFormat = "json" | "jsonl";

export interface StagedImport {
  importId: string;
  chunks: number;
  /** 0 only for an export of a conversation with no messages (nothing staged): an empty conversation. */
  messages: number;
}

/** Bad input, named: the first bad message (its index, or its line for JSONL) and why. */
export class ImportRefused extends Error {}

/** The body went past IMPORT_BODY_LIMIT; nothing of it is kept. */
export class ImportTooLarge extends Error {}

export async function stageTranscript(
  bucket: R2Bucket,
  {
    tenantId,
    body,
    format,
    onBytes,
  }: {
    tenantId: string;
    body: ReadableStream<Uint8Array>;
    format: ImportFormat;
    /** Each piece of the body as it is read, before it is checked (a keyed import digests them). */
    onBytes?: (bytes: Uint8Array) => Promise<void>;
  },
): Promise<StagedImport> {
  const importId = sortableId("imp");
  const json = format === "json" ? new JsonMessageScanner(MAX_IMPORT_MESSAGE_CHARS) : null;
  const jsonl = format === "jsonl" ? new JsonlMessageScanner(MAX_IMPORT_MESSAGE_CHARS) : null;
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  const pairing = new PairingCheck();
  const superseded = new SupersededCheck();
  const exportLines = new ExportLines();
  let count = 0;
  let replayed = 0;
  let chunks = 0;
  let chunk: ImportedMessage[] = [];
  let chunkChars = 0;

  const flush = async () => {
    const text = JSON.stringify(chunk);
    const key = importStagingKey(tenantId, importId, chunks);
    // The marker goes first: no chunk is ever in R2 without one the cron tick can find.
    if (chunks === 0)
      await withRetry("import staging marker", () => bucket.put(stagedImportMarkerKey(tenantId, importId), ""));
    // Counted before its write: a write may land and still throw (its answer lost, every try), and
    // discardStaged must then delete this chunk too before the marker that leads the sweep to it.
    chunks++;
    await withRetry("import staging write", () => bucket.put(key, text));
    chunk = [];
    chunkChars = 0;
  };
  const take = async (raw: RawMessage) => {
    const where = raw.line === undefined ? `messages[${count}]` : `messages[${count}] (line ${raw.line})`;
    const chars = raw.text.length;
    const m = parseImportedMessage(raw.text, where, (line) =>
      exportLines.add(line, raw.line === undefined ? where : `line ${raw.line}`),
    );
    // Parsed, its text is let go: a message as large as MAX_IMPORT_MESSAGE_CHARS is then held once
    // (parsed), not also as text while its chunk is serialized and written.
    raw.text = "";
    if (!m) return;
    pairing.add(m, where);
    superseded.add(m, where);
    if (!m.agent && m.supersededBy === undefined && ++replayed > MAX_IMPORT_MESSAGES)
      throw new TranscriptError(
        `${where}: more than ${MAX_IMPORT_MESSAGES} messages the model would be sent (replaced exchanges and sub-agents' messages aside), the most an import may hold: half the Messages API's limit of 100000 a request, leaving room for the turns after it`,
      );
    chunk.push(m);
    chunkChars += chars;
    count++;
    if (json) json.countHint = count;
    if (chunk.length >= IMPORT_CHUNK_MESSAGES || chunkChars >= IMPORT_CHUNK_CHARS) await flush();
  };
  const decode = (bytes?: Uint8Array) => {
    try {
      return bytes ? decoder.decode(bytes, { stream: true }) : decoder.decode();
    } catch {
      throw new ImportRefused(`body: not valid UTF-8 (after message ${count})`);
    }
  };

  const reader = body.getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // Counted as it arrives: a body without a declared length (chunked) is bounded only here.
      bytes += value?.length ?? 0;
      if (bytes > IMPORT_BODY_LIMIT) throw new ImportTooLarge(`request body larger than ${IMPORT_BODY_LIMIT} bytes`);
      if (value && onBytes) await onBytes(value);
      const text = decode(done ? undefined : value);
      const raws = json ? json.push(text) : jsonl!.push(text);
      for (const raw of raws) await take(raw);
      if (done) break;
    }
    if (json) json.end();
    else for (const raw of jsonl!.end()) await take(raw);
    // The export of a conversation with none (its JSONL conversation line, or the JSON document's
    // `conversation`, says lastSeq 0) may hold no messages; one cut or edited to none is refused.
    pairing.end({ exported: exportLines.emptyExport || !!json?.emptyExport });
    superseded.end();
    if (chunk.length) await flush();
    return { importId, chunks, messages: count };
  } catch (err) {
    await reader.cancel().catch(() => {});
    await discardStaged(bucket, tenantId, { importId, chunks });
    if (err instanceof ScanError || err instanceof TranscriptError) throw new ImportRefused(err.message);
    throw err;
  }
}

export async function readStagedChunk(
  bucket: R2Bucket,
  { tenantId, importId, chunk }: { tenantId: string; importId: string; chunk: number },
): Promise<ImportedMessage[]> {
  return withRetry("import staging read", async () => {
    const obj = await bucket.get(importStagingKey(tenantId, importId, chunk));
    if (!obj) throw new Error(`import ${importId}: staged chunk ${chunk} is missing`);
    return (await obj.json()) as ImportedMessage[];
  });
}

export async function discardStaged(
  bucket: R2Bucket,
  tenantId: string,
  staged: Pick<StagedImport, "importId" | "chunks">,
): Promise<void> {
  const keys = Array.from({ length: staged.chunks }, (_, n) => importStagingKey(tenantId, staged.importId, n));
  for (let i = 0; i < keys.length; i += 1000)
    await withRetry("import staging delete", () => bucket.delete(keys.slice(i, i + 1000)));
  // The marker goes last (a first flush may have written it before its chunk failed).
  await withRetry("import staging delete", () => bucket.delete(stagedImportMarkerKey(tenantId, staged.importId)));
}

/**
 * How old a staged import's marker and every one of its chunks must be before the sweep takes it:
 * far past the longest an import request runs (a 64 MiB body, staged and committed), so an import
 * still staging or committing is never touched.
 */
export const STAGED_IMPORT_MAX_AGE_MS = 6 * 60 * 60_000;

/**
 * Staging a request left behind (its isolate died while staging or before the commit's clean-up):
 * one page of the oldest markers, each taken with its chunks when the marker and every chunk are
 * older than STAGED_IMPORT_MAX_AGE_MS. Returns how many imports it removed.
 */
export async function sweepStagedImports(
  bucket: R2Bucket,
  { now, limit = 100 }: { now: number; limit?: number },
): Promise<number> {
  const cutoff = now - STAGED_IMPORT_MAX_AGE_MS;
  const markers = await bucket.list({ prefix: stagedImportMarkerPrefix, limit });
  let swept = 0;
  for (const marker of markers.objects) {
    const ref = parseStagedImportMarkerKey(marker.key);
    if (!ref || marker.uploaded.getTime() > cutoff) continue;
    const keys: string[] = [];
    let fresh = false;
    let cursor: string | undefined;
    do {
      const page = await bucket.list({ prefix: importStagingPrefix(ref.tenantId, ref.importId), cursor });
      for (const o of page.objects) {
        if (o.uploaded.getTime() > cutoff) fresh = true;
        keys.push(o.key);
      }
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor && !fresh);
    // A chunk written lately: the import is still staging.
    if (fresh) continue;
    for (let i = 0; i < keys.length; i += 1000) await bucket.delete(keys.slice(i, i + 1000));
    await bucket.delete(marker.key);
    swept++;
  }
  return swept;
}
