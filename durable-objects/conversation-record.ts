// The R2 side of a conversation: the head object and the immutable message batches. R2 is the
// record; the DO's SQLite is rebuilt from what is written here.
import type { StoredMessage } from "../core/types";
import {
  conversationHeadKey,
  messageBatchKey,
  messageBatchPrefix,
  messageBatchStartAfter,
} from "../r2-layout";
import type { ConversationHead } from "./conversation-head";

const JSON_META = { httpMetadata: { contentType: "application/json" } };

export async function writeHead(bucket: R2Bucket, head: ConversationHead): Promise<void> {
  await bucket.put(conversationHeadKey(head.tenantId, head.id), JSON.stringify(head), JSON_META);
}

export async function readHead(bucket: R2Bucket, tenantId: string, conversationId: string): Promise<ConversationHead | null> {
  const obj = await bucket.get(conversationHeadKey(tenantId, conversationId));
  if (!obj) return null;
  const head = (await obj.json()) as ConversationHead;
  // The key already scopes by tenant; this guards against a mis-filed object.
  return head.tenantId === tenantId && head.id === conversationId ? head : null;
}

/** Writes one immutable batch; `onlyIf` makes a second write of the same key fail instead of overwrite. */
export async function writeBatch(bucket: R2Bucket, head: ConversationHead, messages: readonly StoredMessage[]): Promise<string> {
  const key = messageBatchKey(head.tenantId, head.id, messages[0].seq, messages[messages.length - 1].seq);
  const body = JSON.stringify({ conversationId: head.id, messages });
  const written = await bucket.put(key, body, { ...JSON_META, onlyIf: { etagDoesNotMatch: "*" } });
  if (!written) throw new Error(`message batch ${key} already exists`);
  return key;
}

/** Every batch after `afterSeq`, in seq order, paged by cursor. */
export async function* readBatchesAfter(
  bucket: R2Bucket,
  tenantId: string,
  conversationId: string,
  afterSeq: number,
): AsyncGenerator<{ key: string; messages: StoredMessage[] }> {
  const prefix = messageBatchPrefix(tenantId, conversationId);
  let cursor: string | undefined;
  const startAfter = afterSeq > 0 ? messageBatchStartAfter(tenantId, conversationId, afterSeq) : undefined;
  do {
    const page = await bucket.list({ prefix, cursor, startAfter: cursor ? undefined : startAfter, limit: 1000 });
    for (const obj of page.objects) {
      const body = await bucket.get(obj.key);
      if (!body) continue;
      const parsed = (await body.json()) as { messages: StoredMessage[] };
      yield { key: obj.key, messages: parsed.messages };
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}
