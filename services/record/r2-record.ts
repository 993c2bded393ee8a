// The R2 side of a conversation: the head object and the immutable message batches. R2 is the
// record; the DO's SQLite is rebuilt from what is written here.
import type { StoredMessage } from "../../core/types";
import { conversationHeadKey, messageBatchKey, messageBatchPrefix, messageBatchStartAfter } from "../../r2-layout";
import type { ConversationHead } from "./conversation-head";
import { PermanentError, withRetry } from "./retry";

const JSON_META = { httpMetadata: { contentType: "application/json" } };

export async function writeHead(bucket: R2Bucket, head: ConversationHead): Promise<void> {
  // A whole-object overwrite: repeating it is harmless.
  await withRetry("head write", () =>
    bucket.put(conversationHeadKey(head.tenantId, head.id), JSON.stringify(head), JSON_META),
  );
}

export async function readHead(
  bucket: R2Bucket,
  tenantId: string,
  conversationId: string,
): Promise<ConversationHead | null> {
  const head = await withRetry("head read", async () => {
    const obj = await bucket.get(conversationHeadKey(tenantId, conversationId));
    return obj ? ((await obj.json()) as ConversationHead) : null;
  });
  if (!head) return null;
  // The key already scopes by tenant; this guards against a mis-filed object.
  return head.tenantId === tenantId && head.id === conversationId ? head : null;
}

/**
 * Writes one immutable batch; `onlyIf` makes a second write of the same key fail instead of
 * overwrite. A transient failure is retried; when a retry finds the key taken, the earlier attempt
 * may have landed before its answer was lost, so the batch counts as written only if the stored
 * bytes are exactly these.
 */
export async function writeBatch(
  bucket: R2Bucket,
  head: ConversationHead,
  messages: readonly StoredMessage[],
): Promise<string> {
  const key = messageBatchKey(head.tenantId, head.id, messages[0].seq, messages[messages.length - 1].seq);
  const body = JSON.stringify({ conversationId: head.id, messages });
  await withRetry("message batch write", async (attempt) => {
    const written = await bucket.put(key, body, { ...JSON_META, onlyIf: { etagDoesNotMatch: "*" } });
    if (written) return;
    const existing = attempt > 0 ? await bucket.get(key) : null;
    if (existing && (await existing.text()) === body) return;
    throw new PermanentError(`message batch ${key} already exists`);
  });
  return key;
}

/** Every batch after `afterSeq`, in seq order, paged by cursor. */
export async function* readBatchesAfter(
  bucket: R2Bucket,
  { tenantId, conversationId, afterSeq }: { tenantId: string; conversationId: string; afterSeq: number },
): AsyncGenerator<{ key: string; messages: StoredMessage[] }> {
  const prefix = messageBatchPrefix(tenantId, conversationId);
  let cursor: string | undefined;
  const startAfter = afterSeq > 0 ? messageBatchStartAfter(tenantId, conversationId, afterSeq) : undefined;
  do {
    const page = await withRetry("batch listing", () =>
      bucket.list({ prefix, cursor, startAfter: cursor ? undefined : startAfter, limit: 1000 }),
    );
    for (const obj of page.objects) {
      const parsed = await withRetry("batch read", async () => {
        const body = await bucket.get(obj.key);
        return body ? ((await body.json()) as { messages: StoredMessage[] }) : null;
      });
      if (!parsed) continue;
      yield { key: obj.key, messages: parsed.messages };
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}
