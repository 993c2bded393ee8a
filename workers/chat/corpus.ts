// The daily corpus log: lifecycle events of a tenant (compaction.started, compaction.applied,
// fold.applied) as markdown, one immutable R2 object per event, read back as one document per day.
import { sortableId } from "../../core/ids";
import { corpusDayPrefix, corpusEventKey } from "../../r2-layout";

export async function logCorpusEvent(bucket: R2Bucket, tenantId: string, event: string, fields: Record<string, unknown>, at = new Date()): Promise<void> {
  const day = at.toISOString().slice(0, 10);
  const lines = [`## ${at.toISOString()} ${event}`, ...Object.entries(fields).map(([k, v]) => `- ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`), ""];
  await bucket.put(corpusEventKey(tenantId, day, sortableId("evt", at.getTime())), lines.join("\n"), { httpMetadata: { contentType: "text/markdown" } });
}

/** The day's log in event order; `null` when nothing was logged that day. */
export async function readCorpusDay(bucket: R2Bucket, tenantId: string, day: string, maxEvents = 2_000): Promise<string | null> {
  const parts: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: corpusDayPrefix(tenantId, day), cursor, limit: 500 });
    const bodies = await Promise.all(page.objects.map(async (o) => (await bucket.get(o.key))?.text() ?? ""));
    parts.push(...bodies);
    cursor = page.truncated && parts.length < maxEvents ? page.cursor : undefined;
  } while (cursor);
  return parts.length ? `# Corpus log ${day}\n\n${parts.join("\n")}` : null;
}
