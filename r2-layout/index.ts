// The one module that builds R2 keys. Every prefix ends in "/" so listings never bleed into a
// sibling (conv_1/ vs conv_10/). Numbers are zero-padded so lexical order is numeric order.

const SEQ_WIDTH = 12;

export const padSeq = (seq: number): string => String(seq).padStart(SEQ_WIDTH, "0");

export const tenantPrefix = (tenantId: string): string => `tenants/${tenantId}/`;

export const conversationPrefix = (tenantId: string, conversationId: string): string =>
  `${tenantPrefix(tenantId)}conversations/${conversationId}/`;

/** The conversation's head object: metadata, settings and the summary fields. Small; rewritten in place. */
export const conversationHeadKey = (tenantId: string, conversationId: string): string =>
  `${conversationPrefix(tenantId, conversationId)}head.json`;

/** Immutable message batches: written once, never rewritten. */
export const messageBatchPrefix = (tenantId: string, conversationId: string): string =>
  `${conversationPrefix(tenantId, conversationId)}messages/`;

export const messageBatchKey = (tenantId: string, conversationId: string, firstSeq: number, lastSeq: number): string =>
  `${messageBatchPrefix(tenantId, conversationId)}${padSeq(firstSeq)}-${padSeq(lastSeq)}.json`;

/**
 * The listing cursor that skips every batch whose first seq is <= `seq`: "~" sorts after "-",
 * so `<pad(seq)>~` is greater than any `<pad(seq)>-...` key and smaller than `<pad(seq + 1)>`.
 */
export const messageBatchStartAfter = (tenantId: string, conversationId: string, seq: number): string =>
  `${messageBatchPrefix(tenantId, conversationId)}${padSeq(seq)}~`;

/** Parses the seq range back out of a batch key; null for anything that is not a batch key. */
export function parseMessageBatchKey(key: string): { firstSeq: number; lastSeq: number } | null {
  const m = /\/messages\/(\d{12})-(\d{12})\.json$/.exec(key);
  return m ? { firstSeq: Number(m[1]), lastSeq: Number(m[2]) } : null;
}

export const attachmentPrefix = (tenantId: string, attachmentId: string): string =>
  `${tenantPrefix(tenantId)}attachments/${attachmentId}/`;

/** The attachment's bytes, exactly as uploaded. */
export const attachmentBlobKey = (tenantId: string, attachmentId: string): string =>
  `${attachmentPrefix(tenantId, attachmentId)}blob`;

/** A text attachment's line index (checkpoint offsets), so line ranges are ranged reads. */
export const attachmentLineIndexKey = (tenantId: string, attachmentId: string): string =>
  `${attachmentPrefix(tenantId, attachmentId)}line-index.json`;

/** A text attachment stored in UTF-16 or Windows-1252, as UTF-8: what its line readers read. */
export const attachmentTextKey = (tenantId: string, attachmentId: string): string =>
  `${attachmentPrefix(tenantId, attachmentId)}text-utf8`;

/** A tenant's "brain": what the lifecycle writes about itself, beside the conversations it observes. */
export const brainPrefix = (tenantId: string): string => `${tenantPrefix(tenantId)}brain/`;

/** The tenant's corpus log of one UTC day, as one markdown document once the day is rolled up. */
export const corpusLogKey = (tenantId: string, day: string): string => `${brainPrefix(tenantId)}corpus/${day}.log.md`;

/** The open day's events, one immutable object each (no read-modify-write across writers), rolled into the log. */
export const corpusEventPrefix = (tenantId: string, day: string): string => `${brainPrefix(tenantId)}corpus/${day}/`;
export const corpusEventKey = (tenantId: string, day: string, eventId: string): string =>
  `${corpusEventPrefix(tenantId, day)}${eventId}.md`;

/** A conversation's prompt snapshots: each model request as sent, the newest 50 kept. */
export const promptSnapshotPrefix = (tenantId: string, conversationId: string): string =>
  `${brainPrefix(tenantId)}prefrontal/.debug/${conversationId}/`;
export const promptSnapshotKey = (tenantId: string, conversationId: string, snapshotId: number): string =>
  `${promptSnapshotPrefix(tenantId, conversationId)}${padSeq(snapshotId)}.json`;

/** An import's validated messages, staged in chunks before the conversation exists; removed once committed or refused. */
export const importStagingPrefix = (tenantId: string, importId: string): string =>
  `${tenantPrefix(tenantId)}imports/${importId}/`;
export const importStagingKey = (tenantId: string, importId: string, chunk: number): string =>
  `${importStagingPrefix(tenantId, importId)}${padSeq(chunk)}.json`;

/** A tenant-wide export job's objects (its record is the D1 row export_jobs): the one object holding every conversation. */
export const exportJobPrefix = (tenantId: string, exportId: string): string =>
  `${tenantPrefix(tenantId)}exports/${exportId}/`;
export const exportDataKey = (tenantId: string, exportId: string): string =>
  `${exportJobPrefix(tenantId, exportId)}export.jsonl`;

/**
 * One empty marker per staged import, written before its first chunk and removed after its last,
 * outside every tenant: the cron tick finds the staging a dead request left behind by listing this
 * one prefix (import ids sort by their start, so oldest first), never by walking tenants.
 */
export const stagedImportMarkerPrefix = "staged-imports/";
export const stagedImportMarkerKey = (tenantId: string, importId: string): string =>
  `${stagedImportMarkerPrefix}${importId}/${tenantId}`;

/** The import and its tenant back out of a marker key; null for anything else. */
export function parseStagedImportMarkerKey(key: string): { tenantId: string; importId: string } | null {
  if (!key.startsWith(stagedImportMarkerPrefix)) return null;
  const rest = key.slice(stagedImportMarkerPrefix.length);
  const slash = rest.indexOf("/");
  if (slash <= 0 || slash === rest.length - 1) return null;
  return { importId: rest.slice(0, slash), tenantId: rest.slice(slash + 1) };
}
