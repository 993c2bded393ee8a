// bench:recall-public — evidence recall@5 and hit@5 on LongMemEval's long haystacks (the _s
// variant: ~50 sessions, ~500 turns per question), the cortex through GET /v1/search against a
// textbook BM25 computed here over the same turns. Each question's haystack is one tenant (each
// session a conversation, loaded verbatim through POST /v1/conversations/:id/import), so every
// search sees exactly that question's history, in that tenant's own cortex shard (so BM25's term
// statistics are the tenant's own plus the shipped background's, services/cortex/term-stats.ts);
// the latency figure names the messages indexed across all shards. The background leaves out the
// sessions of the first BACKGROUND_HELD_OUT_QUESTIONS questions (100), so those are held out; the
// script says so when asked for more.
//   RECALL_DATA_DIR   folder with the LongMemEval JSON (required; nothing is downloaded)
//   RECALL_QUESTIONS  how many questions (default 100; `--limit N` on the command line wins)
// Besides the cortex and the baseline it prints every lever side by side, those that did not help
// included: the doctrine's query rewrite through the API (query-rewrite.mjs), the ranking levers on
// an in-process FTS5 index of the same turns (recall-levers.mjs), the local semantic path
// (recall-semantic.mjs), session dates on the "when" questions; and the load average of the run.
//   --type T          only questions of type T (e.g. temporal-reasoning)
//   --semantic        run the stack with SEMANTIC_SEARCH=local, so the cortex row is the fused ranking
import { cpus, loadavg } from "node:os";
import { bm25Index } from "./bm25.mjs";
import { importTypeScript, quantile, withStack } from "./common.mjs";
import { exchanges, loadLongMemEval, recallDataDir } from "./longmemeval.mjs";
import { leverRankings, loadLeverCore, sharedIndexRankings } from "./recall-levers.mjs";
import { keyWords } from "./query-rewrite.mjs";
import { loadSemanticCore, semanticLevers } from "./recall-semantic.mjs";

const K = 5;

async function call(base, key, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body && JSON.stringify(body),
  });
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
    const conv = await call(base, apiKey, "POST", "/v1/conversations", {
      title: `${q.sessionIds[s]} ${q.dates?.[s] ?? ""}`.trim(),
      settings: { foldThresholdChars: 50_000_000 },
    });
    convs.push({ id: conv.id, count: session.kept.length });
    for (let i = 0; i < session.kept.length; i += 200) {
      const part = session.kept.slice(i, i + 200);
      const { messages } = await call(base, apiKey, "POST", `/v1/conversations/${conv.id}/import`, {
        messages: part.map((t) => ({ role: t.role, text: t.text })),
      });
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
    sessionRecall: answerSessions.length
      ? answerSessions.filter((s) => sessions.has(s)).length / answerSessions.length
      : 0,
  };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const row = (label, rs) =>
  `${label.padEnd(60)} recall@5 ${mean(rs.map((r) => r.recall)).toFixed(3)}   hit@5 ${mean(rs.map((r) => r.hit)).toFixed(3)}   session recall@5 ${mean(rs.map((r) => r.sessionRecall)).toFixed(3)}`;

/** The 1-minute load average, sampled every 5 s while `fn` runs: the machine is shared, so the figures say how busy it was. */
async function withLoadSamples(fn) {
  const samples = [loadavg()[0]];
  const timer = setInterval(() => samples.push(loadavg()[0]), 5000);
  try {
    return { result: await fn(), samples };
  } finally {
    clearInterval(timer);
  }
}

/** GET /v1/search's hits for `q`, as turns of the question's haystack. */
async function searchTurns(base, q, text, limit) {
  const res = await call(
    base,
    q.apiKey,
    "GET",
    `/v1/search?${new URLSearchParams({ q: text, kind: "message", limit: String(limit) })}`,
  );
  return res.results.map((h) => q.byMessage.get(h.messageId)).filter(Boolean);
}

export async function benchRecallPublic() {
  const dir = recallDataDir("bench:recall-public");
  const flag = process.argv.indexOf("--limit");
  const limit = Number(flag >= 0 ? process.argv[flag + 1] : (process.env.RECALL_QUESTIONS ?? 100));
  if (!Number.isInteger(limit) || limit < 1)
    throw new Error("--limit / RECALL_QUESTIONS: a positive whole number of questions");
  // --semantic: the stack runs the local semantic path (SEMANTIC_SEARCH=local), so the cortex row is the fused ranking.
  const semanticOn = process.argv.includes("--semantic");
  // --type T: only questions of that type (e.g. temporal-reasoning, for the session-date lever).
  const typeFlag = process.argv.indexOf("--type");
  const questions = loadLongMemEval(dir, limit, typeFlag >= 0 ? process.argv[typeFlag + 1] : undefined);
  const core = await loadSemanticCore();
  await loadLeverCore();
  console.log(
    `LongMemEval: ${questions.length} questions from ${dir}; semantic path through the API: ${semanticOn ? "on (local)" : "off (lexical only, the default)"}`,
  );
  const { BACKGROUND_HELD_OUT_QUESTIONS: heldOut } = await importTypeScript("services/cortex/background-terms.ts");
  if (typeFlag >= 0 || questions.length > heldOut)
    console.log(
      `note: the background term counts leave out only the first ${heldOut} questions' sessions; ${typeFlag >= 0 ? "a --type selection" : "questions past those"} may have sessions counted in them`,
    );
  const { samples } = await withLoadSamples(() =>
    withStack(
      async (base) => {
        const t0 = Date.now();
        for (const q of questions) Object.assign(q, await load(base, q));
        const messages = questions.reduce((n, q) => n + q.kept.length, 0);
        console.log(
          `loaded ${messages} messages through the import route in ${((Date.now() - t0) / 1000).toFixed(0)} s; evidence turns left out (broken alternation): ${questions.reduce((n, q) => n + q.droppedEvidence, 0)}`,
        );
        const latencies = [];
        // Lever name -> one {type, score} per question, the API's rows first.
        const results = new Map();
        // The cortex before its shards (one FTS5 index over every tenant's turns), in-process, for the side-by-side row.
        const shared = sharedIndexRankings(questions);
        const add = (name, q, top) =>
          results.set(name, [...(results.get(name) ?? []), { type: q.type, ...score(top.slice(0, K), q) }]);
        const cortexName = `cortex (GET /v1/search${semanticOn ? ", semantic fused" : ""})`;
        for (const q of questions) {
          let hits = [];
          for (let rep = 0; rep < 5; rep++) {
            const started = performance.now();
            hits = await searchTurns(base, q, q.question, K);
            latencies.push(performance.now() - started);
          }
          add(cortexName, q, hits);
          const bm25 = bm25Index(q.kept.map((t) => t.text));
          add(
            "plain BM25 (this script)",
            q,
            bm25(q.question, K).map((i) => q.kept[i]),
          );
          // The doctrine's rewrite (query-rewrite.mjs), through the same route memory_search calls.
          const words = keyWords(q.question);
          const asked = await searchTurns(base, q, q.question, 50);
          const rewritten = words ? await searchTurns(base, q, words, 50) : asked;
          add("rewrite: key words only (API)", q, rewritten);
          const index = new Map(q.kept.map((t, i) => [t, String(i)]));
          const fused = core.reciprocalRankFusion([asked.map((t) => index.get(t)), rewritten.map((t) => index.get(t))]);
          add(
            "rewrite: question + key words, RRF (API)",
            q,
            fused.map((f) => q.kept[Number(f.id)]),
          );
          const levers = {
            "one shared index over every tenant (the cortex before its shards)": shared.get(q),
            ...leverRankings(q.kept, q.question, q.dates),
          };
          Object.assign(
            levers,
            await semanticLevers(
              core,
              q.kept,
              q.question,
              levers["discount 3 unless asked, shard + background counts (shipped)"],
            ),
          );
          for (const [name, ranked] of Object.entries(levers))
            add(
              `in-process: ${name}`,
              q,
              ranked.map((i) => q.kept[i]),
            );
        }
        console.log(
          `\nlever table (${questions.length} questions; recall@5 = share of evidence turns in the top 5, hit@5 = at least one):`,
        );
        for (const [name, rs] of results) console.log(row(name, rs));
        const types = [...new Set(questions.map((q) => q.type))].sort();
        console.log(`\nby question type, recall@5 (cortex | plain BM25 | shipped + session date in words):`);
        for (const type of types) {
          const of = (name) =>
            mean((results.get(name) ?? []).filter((r) => r.type === type).map((r) => r.recall)).toFixed(2);
          const n = questions.filter((q) => q.type === type).length;
          console.log(
            `  ${type.padEnd(26)} n=${String(n).padStart(3)}  ${of(cortexName)} | ${of("plain BM25 (this script)")} | ${of("in-process: shipped + session date in words")}`,
          );
        }
        const temporal = (name) => (results.get(name) ?? []).filter((r) => r.type === "temporal-reasoning");
        if (temporal(cortexName).length)
          console.log(`\nsession dates on "when" questions (temporal-reasoning, n=${temporal(cortexName).length}):`);
        if (temporal(cortexName).length)
          for (const name of [
            cortexName,
            "in-process: discount 3 unless asked, shard + background counts (shipped)",
            "in-process: + session date in the text",
            "in-process: shipped + session date in words",
          ])
            console.log(row(`  ${name}`, temporal(name)));
        console.log(
          `\nsearch latency over ${latencies.length} calls at ${messages} indexed messages: p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms`,
        );
      },
      semanticOn ? { SEMANTIC_SEARCH: "local" } : {},
    ),
  );
  console.log(
    `load average (1 min) during the run, ${cpus().length} cores: min ${Math.min(...samples).toFixed(1)}, mean ${mean(samples).toFixed(1)}, max ${Math.max(...samples).toFixed(1)}`,
  );
}
