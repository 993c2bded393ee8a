// bench:recall-public — evidence recall@5 and hit@5 on LongMemEval's long haystacks (the _s
// variant: ~50 sessions, ~500 turns per question), the cortex through GET /v1/search against a
// textbook BM25 computed here over the same turns. Each question's haystack is one tenant (each
// session a conversation, loaded verbatim through POST /v1/conversations/:id/import), so every
// search sees exactly that question's history, in that tenant's own cortex shard (so BM25's term
// statistics are the tenant's own); the latency figure names the messages indexed across all shards.
//   RECALL_DATA_DIR   folder with the LongMemEval JSON (required; nothing is downloaded)
//   RECALL_QUESTIONS  how many questions (default 100; `--limit N` on the command line wins)
// Besides the cortex and the baseline it prints the ranking levers side by side (recall-levers.mjs:
// the same turns on an in-process FTS5 index), those that did not help included.
import { existsSync } from "node:fs";
import { bm25Index } from "./bm25.mjs";
import { quantile, withStack } from "./common.mjs";
import { exchanges, loadLongMemEval } from "./longmemeval.mjs";
import { leverRankings } from "./recall-levers.mjs";

const K = 5;

async function call(base, key, method, path, body) {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body && JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  return json;
}

/** One tenant holding the question's haystack; returns the message id -> turn map and the counts. */
async function load(base, q) {
  const { apiKey } = await call(base, "dev-admin-token", "POST", "/v1/admin/tenants", { name: `lme-${q.id}` });
  const byMessage = new Map();
  const kept = [];
  let dropped = 0;
  const convs = [];
  for (let s = 0; s < q.sessionIds.length; s++) {
    const session = exchanges(q.turns.filter((t) => t.session === s));
    dropped += session.dropped.filter((t) => t.evidence).length;
    if (!session.kept.length) continue;
    const conv = await call(base, apiKey, "POST", "/v1/conversations", { title: `${q.sessionIds[s]} ${q.dates?.[s] ?? ""}`.trim(), settings: { foldThresholdChars: 50_000_000 } });
    convs.push({ id: conv.id, count: session.kept.length });
    for (let i = 0; i < session.kept.length; i += 200) {
      const part = session.kept.slice(i, i + 200);
      const { messages } = await call(base, apiKey, "POST", `/v1/conversations/${conv.id}/import`, { messages: part.map((t) => ({ role: t.role, text: t.text })) });
      messages.forEach((m, j) => byMessage.set(m.id, part[j]));
    }
    kept.push(...session.kept);
  }
  // Indexing runs after the import answers: wait until every conversation's row shows its messages.
  for (let tries = 0; ; tries++) {
    const list = await call(base, apiKey, "GET", "/v1/conversations?limit=100");
    const counts = new Map(list.conversations.map((c) => [c.id, c.messageCount]));
    if (convs.every((c) => counts.get(c.id) >= c.count)) break;
    if (tries > 600) throw new Error(`indexing of ${q.id} did not finish`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { apiKey, byMessage, kept, droppedEvidence: dropped };
}

function score(topTurns, q) {
  const evidence = q.kept.filter((t) => t.evidence);
  const found = evidence.filter((t) => topTurns.includes(t)).length;
  const sessions = new Set(topTurns.map((t) => q.sessionIds[t.session]));
  const answerSessions = [...q.answerSessions];
  return {
    recall: evidence.length ? found / evidence.length : 0,
    hit: found > 0 ? 1 : 0,
    sessionRecall: answerSessions.length ? answerSessions.filter((s) => sessions.has(s)).length / answerSessions.length : 0,
  };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const row = (label, rs) =>
  `${label.padEnd(46)} recall@5 ${mean(rs.map((r) => r.recall)).toFixed(3)}   hit@5 ${mean(rs.map((r) => r.hit)).toFixed(3)}   session recall@5 ${mean(rs.map((r) => r.sessionRecall)).toFixed(3)}`;

export async function benchRecallPublic() {
  const dir = process.env.RECALL_DATA_DIR;
  if (!dir || !existsSync(dir)) {
    console.log("bench:recall-public needs RECALL_DATA_DIR: a folder with LongMemEval's JSON (longmemeval_s*.json or one file per question)");
    process.exit(2);
  }
  const flag = process.argv.indexOf("--limit");
  const limit = Number(flag >= 0 ? process.argv[flag + 1] : (process.env.RECALL_QUESTIONS ?? 100));
  if (!Number.isInteger(limit) || limit < 1) throw new Error("--limit / RECALL_QUESTIONS: a positive whole number of questions");
  const questions = loadLongMemEval(dir, limit);
  console.log(`LongMemEval: ${questions.length} questions from ${dir}`);
  await withStack(async (base) => {
    const t0 = Date.now();
    for (const q of questions) Object.assign(q, await load(base, q));
    const messages = questions.reduce((n, q) => n + q.kept.length, 0);
    console.log(`loaded ${messages} messages through the import route in ${((Date.now() - t0) / 1000).toFixed(0)} s; evidence turns left out (broken alternation): ${questions.reduce((n, q) => n + q.droppedEvidence, 0)}`);
    const cortex = [];
    const baseline = [];
    const latencies = [];
    const byType = new Map();
    const levers = new Map();
    for (const q of questions) {
      for (const [name, ranked] of Object.entries(leverRankings(q.kept, q.question, q.dates))) levers.set(name, [...(levers.get(name) ?? []), score(ranked.slice(0, K).map((i) => q.kept[i]), q)]);
      const bm25 = bm25Index(q.kept.map((t) => t.text));
      baseline.push(score(bm25(q.question, K).map((i) => q.kept[i]), q));
      let hits = [];
      for (let rep = 0; rep < 5; rep++) {
        const started = performance.now();
        const res = await call(base, q.apiKey, "GET", `/v1/search?${new URLSearchParams({ q: q.question, kind: "message", limit: String(K) })}`);
        latencies.push(performance.now() - started);
        hits = res.results;
      }
      const s = score(hits.map((h) => q.byMessage.get(h.messageId)).filter(Boolean), q);
      cortex.push(s);
      byType.set(q.type, [...(byType.get(q.type) ?? []), { c: s, b: baseline.at(-1) }]);
    }
    console.log(row("cortex (GET /v1/search)", cortex));
    console.log(row("plain BM25 (this script)", baseline));
    for (const [type, rs] of [...byType].sort()) console.log(`  ${type.padEnd(26)} n=${String(rs.length).padStart(3)}  cortex recall@5 ${mean(rs.map((r) => r.c.recall)).toFixed(2)}  bm25 ${mean(rs.map((r) => r.b.recall)).toFixed(2)}`);
    console.log(`levers, side by side over the same turns (in-process FTS5, the cortex's tokenizer and query):`);
    for (const [name, rs] of levers) console.log(row(`  ${name}`, rs));
    console.log(`search latency over ${latencies.length} calls, ${messages} messages indexed across the tenants' shards: p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms`);
  });
}
