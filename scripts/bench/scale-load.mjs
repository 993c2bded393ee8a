// bench:scale's load: tenants and their keys through the admin API, then each tenant's history
// through POST /v1/conversations/import (conversations of at most CONVERSATION_MAX messages, small
// enough that no fold starts), and a wait until every message is indexed in its tenant's shard
// (the listing row's messageCount is written after the indexing run, so it is the signal).
import { tenantText } from "./scale-text.mjs";

export const ADMIN = "dev-admin-token";
// About 230 chars a message: 300 messages stay well under the default 120,000-char fold threshold.
const CONVERSATION_MAX = 300;

export async function api(base, key, method, path, body, contentType = "application/json") {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": contentType },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

/** Runs `job(item)` over `items`, `width` at a time. */
export async function pool(items, width, job) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await job(items[next++]);
    }),
  );
}

const every = (ms, fn) => {
  const t = setInterval(fn, ms);
  return () => clearInterval(t);
};

/** Creates one tenant per size; returns [{index, size, tenantId, key, conversations: []}]. */
export async function createTenants(base, sizes) {
  const tenants = sizes.map((size, index) => ({ index, size, conversations: [] }));
  await pool(tenants, 8, async (t) => {
    const { tenant, apiKey } = await api(base, ADMIN, "POST", "/v1/admin/tenants", { name: `scale-${t.index}` });
    Object.assign(t, { tenantId: tenant.id, key: apiKey });
  });
  return tenants;
}

/** Splits a tenant's history into import jobs, its text drawn from its own seed. */
function importJobs(t) {
  const text = tenantText(1_000 + t.index);
  const jobs = [];
  for (let start = 0; start < t.size; start += CONVERSATION_MAX) {
    const n = Math.min(CONVERSATION_MAX, t.size - start);
    const messages = Array.from({ length: n }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: text.message(),
    }));
    jobs.push({ t, messages, title: `history ${start / CONVERSATION_MAX + 1}` });
  }
  t.text = text;
  return jobs;
}

/** Imports every tenant's history, `width` requests at a time, printing progress. */
export async function importHistories(base, tenants, width = 4) {
  // Interleaved so big and small tenants load side by side, as they would arrive.
  const jobs = tenants.flatMap(importJobs).sort((a, b) => (a.t.index % 97) - (b.t.index % 97) || a.t.index - b.t.index);
  const total = jobs.reduce((n, j) => n + j.messages.length, 0);
  let done = 0;
  const started = Date.now();
  const stop = every(10_000, () =>
    console.log(
      `  imported ${done.toLocaleString("en-US")} / ${total.toLocaleString("en-US")} messages (${Math.round(done / ((Date.now() - started) / 1000))}/s)`,
    ),
  );
  try {
    await pool(jobs, width, async (j) => {
      const conv = await api(base, j.t.key, "POST", `/v1/conversations/import?title=${encodeURIComponent(j.title)}`, {
        messages: j.messages,
      });
      j.t.conversations.push({ id: conv.id, count: j.messages.length });
      done += j.messages.length;
    });
  } finally {
    stop();
  }
  return { messages: total, conversations: jobs.length };
}

/** Waits until every conversation's listing row counts all its messages (indexed, then listed). */
export async function waitIndexed(base, tenants, deadlineMs = 30 * 60_000) {
  const deadline = Date.now() + deadlineMs;
  let waiting = [...tenants];
  while (waiting.length) {
    const still = [];
    await pool(waiting, 8, async (t) => {
      const list = await api(base, t.key, "GET", "/v1/conversations?limit=100");
      const counts = new Map(list.data.map((c) => [c.id, c.messageCount]));
      if (!t.conversations.every((c) => counts.get(c.id) >= c.count)) still.push(t);
    });
    waiting = still;
    if (!waiting.length) break;
    if (Date.now() > deadline) throw new Error(`indexing not finished for ${waiting.length} tenants`);
    console.log(`  waiting for the index of ${waiting.length} tenants`);
    await new Promise((r) => setTimeout(r, 2_000));
  }
}
