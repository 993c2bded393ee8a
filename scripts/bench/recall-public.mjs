// bench:recall-public — evidence recall@5 and hit@5 of GET /v1/search on public long-conversation
// memory benchmarks (scripts/bench/sets/: RealMem, LoCoMo, REALTALK, LongMemEval; where each comes
// from and its licence in docs/recall-sets.md), against a textbook BM25 (bm25.mjs) over exactly the
// turns the cortex holds. One set (sets/index.mjs TUNING_SET) is the one ranking choices may be
// made on; every other set is reported held out, untouched by any choice.
// Each haystack is one tenant, each session a conversation. A person-and-assistant set is loaded
// verbatim through POST /v1/conversations/:id/import as whole exchanges (a turn breaking the
// alternation is left out and counted). A set of two people talking (`speakers: "people"`: LoCoMo,
// REALTALK) is loaded as the outside measurement of issue 28 loaded it: every person's turn, in
// order within its session (six sessions are posted side by side), a user message through POST
// /v1/conversations/:id/messages, which the offline model answers (a short reply quoting it, which
// the cortex indexes too; BM25 and the in-process rows hold the person's turns only, so there the
// two sides search different documents); `--load import` maps it onto user and assistant instead
// (whoever speaks first in a session is the user), as the figures before 2026-12-05 did. A
// question asked in the middle of the history (RealMem) is searched when the sessions before it
// are loaded and no later one is, so it sees exactly its own past.
//   RECALL_DATA_DIR   one subfolder per set (required; nothing is downloaded)
//   --set NAME        only that set (default: every set found under RECALL_DATA_DIR)
//   --limit N         questions per set (default 100, or RECALL_QUESTIONS), chosen deterministically
//   --type T          only questions of type T
//   --background F    also rank in-process with the background term counts in file F (the format
//                     of data/cortex/background-terms.txt), beside the shipped one and none; repeatable
//   --levers          also print the in-process lever table (recall-levers.mjs, recall-semantic.mjs)
//   --semantic        run the stack with SEMANTIC_SEARCH=local, so the cortex row is the fused ranking
//   --rewrite         also search the scripted rewrite of each question (query-rewrite.mjs: its key
//                     nouns, what the doctrine asks the model to search), alone and fused with the
//                     question's own search by reciprocal rank; the same for the plain BM25
//   --load MODE       import | turns: how a two-people set is loaded (default turns; see above);
//                     a person-and-assistant set is always imported
//   WORD_VECTORS_DIR  also rank in-process with bench:recall-tune's nearest words (nearest-words.mjs;
//                     not adopted) beside its ranking alone and searched again with words of its
//                     first hits (always printed; not adopted), over the same turns
//   --misses N        print N of the cortex's misses per set: the question, a missed evidence turn and
//                     the stems the two share (the overlap summary per set is always printed)
// The two cortex layouts side by side, in-process: the shipped searchCortexPage over node:sqlite
// (sqlite-d1.mjs) with each haystack alone in its own database (one CortexDO per tenant, before
// 0.3.0) and with every haystack of the run in one shared database (a D1 shard), over the same turns.
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { DatabaseSync } from "node:sqlite";
import { bm25Index } from "./bm25.mjs";
import { importTypeScript, quantile, withStack } from "./common.mjs";
import { leverRankings, loadLeverCore, shardRankings } from "./recall-levers.mjs";
import {
  FEEDBACK_PICK,
  feedbackRanking,
  NEAREST_PICK,
  nearestWordsRanking,
  questionContext,
  shippedRanking,
  turnIndex,
  vocabularyOf,
  wordVectors,
} from "./nearest-words.mjs";
import { fuse, keyNouns } from "./query-rewrite.mjs";
import { loadSemanticCore, semanticLevers } from "./recall-semantic.mjs";
import { loadSet, setsIn, TUNING_SET } from "./sets/index.mjs";
import { exchanges, loadedTurns, loadMode, pickQuestions, queryText } from "./sets/shape.mjs";
import { d1Over, migrateShard } from "./sqlite-d1.mjs";

const K = 5;
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

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

/** Waits until every conversation in `convs` ({id, count}) lists its messages: indexing runs after the import answers. */
async function indexed(base, key, convs) {
  for (let tries = 0; ; tries++) {
    const counts = new Map();
    let cursor = "";
    do {
      const page = await call(base, key, "GET", `/v1/conversations?limit=100${cursor && `&cursor=${cursor}`}`);
      for (const c of page.data) counts.set(c.id, c.messageCount);
      cursor = page.next ?? "";
    } while (cursor);
    if (convs.every((c) => counts.get(c.id) >= c.count)) return;
    if (tries > 600) throw new Error("indexing did not finish");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The search's hits for `text` as turns of the haystack loaded so far. A hit on a message the set
 * does not hold (the offline model's reply, when turns are posted) takes one of the `limit` places
 * but is left out of the list (so the list may be shorter), and is counted in `stats.replyHits`.
 */
async function searchTurns(base, tenant, text, limit, stats) {
  const params = new URLSearchParams({ q: text, kind: "message", limit: String(limit) });
  const res = await call(base, tenant.apiKey, "GET", `/v1/search?${params}`);
  const turns = res.data.map((h) => tenant.byMessage.get(h.messageId)).filter(Boolean);
  if (stats) stats.replyHits += res.data.length - turns.length;
  return turns;
}

/** The question's content stems (porter, stopwords out), as the cortex looks words up. */
function stems(core, text) {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(words.filter((w) => !core.STOPWORDS.has(w)).flatMap((w) => core.ftsTerms(w)));
}

/** How many of the question's stems a turn holds. */
const shared = (core, asked, turn) => [...stems(core, turn.text)].filter((t) => asked.has(t));

function score(top, evidence) {
  const found = evidence.filter((t) => top.includes(t)).length;
  return { recall: found / evidence.length, hit: found > 0 ? 1 : 0 };
}

/** The sessions a two-people set's turns are posted in at once (each its own conversation object). */
const TURN_LOAD_CONCURRENCY = 6;

/**
 * Sessions posted turn by turn: every turn a user message through POST /v1/conversations/:id/messages
 * (the offline model answers it), sessions side by side. Returns the visible turns (each a "user"
 * turn now, as the cortex stores it) and the conversations to wait on.
 */
async function postTurns(base, tenant, sessions) {
  const visible = sessions.map(() => []);
  const convs = sessions.map(() => null);
  let next = 0;
  let failed = false;
  const worker = async () => {
    for (let at = next++; at < sessions.length && !failed; at = next++) {
      const session = sessions[at];
      const conv = await call(base, tenant.apiKey, "POST", "/v1/conversations", {
        title: `${session.id} ${session.date}`.trim().slice(0, 200),
        settings: { foldThresholdChars: 50_000_000 },
      });
      let last = 0;
      // Each turn knows its session (its conversation), as the conversation lift reads it.
      for (const turn of loadedTurns(session.turns, "turns").kept.map((t) => ({ ...t, session: session.id }))) {
        if (failed) return;
        const res = await call(base, tenant.apiKey, "POST", `/v1/conversations/${conv.id}/messages`, {
          content: turn.text.slice(0, 100_000),
        }).catch((err) => {
          failed = true;
          throw err;
        });
        const user = res.messages.find((m) => m.role === "user");
        if (!user || res.stop_reason === "error") {
          failed = true;
          throw new Error(`turn of ${session.id}: ${JSON.stringify(res).slice(0, 200)}`);
        }
        tenant.byMessage.set(user.id, turn);
        visible[at].push(turn);
        last = Math.max(last, ...res.messages.map((m) => m.seq));
      }
      convs[at] = { id: conv.id, count: last };
    }
  };
  await Promise.all(Array.from({ length: TURN_LOAD_CONCURRENCY }, worker));
  return { visible: visible.flat(), convs: convs.filter(Boolean) };
}

/**
 * One haystack as one tenant, sessions loaded in order (`mode`: "import" or "turns", loadMode);
 * `ask(questions, turns)` runs once the sessions before each cutoff are indexed.
 */
async function runHaystack(base, set, haystack, questions, ask, stats, mode = "import") {
  const { apiKey } = await call(base, "dev-admin-token", "POST", "/v1/admin/tenants", {
    name: `${set.name}-${haystack.id}`.slice(0, 100),
  });
  const tenant = { apiKey, byMessage: new Map() };
  const visible = [];
  const convs = [];
  const cutoffs = [...new Set(questions.map((q) => q.before ?? haystack.sessions.length))].sort((a, b) => a - b);
  let loaded = 0;
  for (const cutoff of cutoffs) {
    if (mode === "turns") {
      const posted = await postTurns(
        base,
        tenant,
        haystack.sessions.slice(loaded, cutoff).filter((s) => s.turns.length),
      );
      visible.push(...posted.visible);
      convs.push(...posted.convs);
      stats.messages += posted.visible.length;
      loaded = cutoff;
    }
    for (; loaded < cutoff; loaded++) {
      const session = haystack.sessions[loaded];
      const { kept: plain, dropped } = exchanges(session.turns);
      const kept = plain.map((t) => ({ ...t, session: session.id }));
      stats.dropped.push(...dropped.map((t) => `${haystack.id}/${t.id}`));
      if (!kept.length) continue;
      const conv = await call(base, apiKey, "POST", "/v1/conversations", {
        title: `${session.id} ${session.date}`.trim().slice(0, 200),
        settings: { foldThresholdChars: 50_000_000 },
      });
      convs.push({ id: conv.id, count: kept.length });
      for (let i = 0; i < kept.length; i += 200) {
        const part = kept.slice(i, i + 200);
        const { messages } = await call(base, apiKey, "POST", `/v1/conversations/${conv.id}/import`, {
          messages: part.map((t) => ({ role: t.role, text: t.text.slice(0, 100_000) })),
        });
        messages.forEach((m, j) => tenant.byMessage.set(m.id, part[j]));
      }
      visible.push(...kept);
      stats.messages += kept.length;
    }
    await indexed(base, apiKey, convs);
    await ask(
      tenant,
      questions.filter((q) => (q.before ?? haystack.sessions.length) === cutoff),
      visible,
    );
  }
}

/** Indexes turns[from..] in the tenant's own database and in the run's shared one (its first chunk, as messageDoc's first); returns the count indexed. */
async function indexLayouts(layouts, own, turns, from) {
  const write = (db) =>
    db.batch(
      turns.slice(from).map((t, j) =>
        db
          .prepare(
            `INSERT INTO cortex_docs (doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body) VALUES (?, ?, ?, 'message', ?, ?, ?, '2026-01-01', ?)`,
          )
          .bind(
            `message:${own.tenant}#${from + j}:00000`,
            own.tenant,
            // Its session is its conversation, as the API loads it (the conversation lift reads it).
            String(t.session),
            String(from + j),
            from + j,
            t.role,
            t.text.slice(0, layouts.cortex.INDEX_CHUNK_CHARS),
          ),
      ),
    );
  if (from < turns.length) {
    await write(own.db);
    await write(layouts.shared);
  }
  return turns.length;
}

/** The top K turns for `text` from the tenant's own database and from the shared one. */
async function searchLayouts(layouts, own, text, turns) {
  const top = async (db) =>
    (await layouts.cortex.searchCortexPage(db, own.tenant, { q: text, kinds: ["message"], limit: K })).hits.map(
      (h) => turns[Number(h.id)],
    );
  return { own: await top(own.db), shared: await top(layouts.shared) };
}

/** A TermBackground from a background-terms.txt file, for the in-process comparison. */
function backgroundFrom(core, file) {
  const text = readFileSync(file, "utf8");
  const documents = Number(/^@documents (\d+)$/m.exec(text)?.[1]);
  if (!Number.isSafeInteger(documents)) throw new Error(`--background ${file}: no @documents line`);
  return core.termBackground(documents, core.parseBackgroundCounts(text));
}

export async function benchRecallPublic() {
  const dir = process.env.RECALL_DATA_DIR;
  if (!dir || !existsSync(dir)) {
    console.log(
      "bench:recall-public needs RECALL_DATA_DIR: a folder with one subfolder per set (realmem, locomo, realtalk, longmemeval; docs/recall-sets.md)",
    );
    process.exit(2);
  }
  const limit = Number(arg("--limit") ?? process.env.RECALL_QUESTIONS ?? 100);
  if (!Number.isInteger(limit) || limit < 1)
    throw new Error("--limit / RECALL_QUESTIONS: a positive whole number of questions");
  const names = setsIn(dir, arg("--set"));
  if (!names.length) {
    console.log(`no set found under ${dir} (subfolders: realmem, locomo, realtalk, longmemeval)`);
    process.exit(2);
  }
  const semanticOn = process.argv.includes("--semantic");
  const leversOn = process.argv.includes("--levers");
  const rewriteOn = process.argv.includes("--rewrite");
  const leverCore = await loadLeverCore();
  const core = {
    ...leverCore,
    ...(await importTypeScript("services/cortex/background-terms.ts")),
    ...(await importTypeScript("core/fts-terms.ts")),
  };
  const missesShown = Number(arg("--misses") ?? 0);
  const vectors = wordVectors();
  const semantic = leversOn ? await loadSemanticCore() : null;
  const extraFiles = process.argv.flatMap((a, i) => (process.argv[i - 1] === "--background" ? [a] : []));
  const backgrounds = {
    "FTS5's own counts (weight 1, no background)": null,
    "shard + shipped background": core.shippedBackground(),
    ...Object.fromEntries(extraFiles.map((f) => [`shard + ${f}`, backgroundFrom(core, f)])),
  };
  const layouts = {
    cortex: await importTypeScript("services/cortex/search-index.ts"),
    shared: d1Over(migrateShard(new DatabaseSync(":memory:"))),
  };
  const sets = names.map((name) => {
    const set = loadSet(dir, name);
    const chosen = pickQuestions(set, limit, arg("--type"));
    console.log(
      `${name}${name === TUNING_SET ? " (tuning set)" : " (held out)"}: ${chosen.length} of ${set.questions.length} questions over ${set.haystacks.length} haystacks; ${set.notes.join("; ")}`,
    );
    return { set, chosen, mode: loadMode(set, arg("--load")) };
  });
  console.log(`semantic path through the API: ${semanticOn ? "on (local)" : "off (lexical only, the default)"}`);
  const samples = [loadavg()[0]];
  const timer = setInterval(() => samples.push(loadavg()[0]), 5000);
  const report = [];
  try {
    await withStack(
      async (base) => {
        for (const { set, chosen, mode } of sets) {
          const stats = {
            messages: 0,
            dropped: [],
            skipped: 0,
            latencies: [],
            found: [],
            missed: [],
            examples: [],
            layoutsSame: 0,
            replyHits: 0,
            layoutsAsked: 0,
          };
          const results = new Map();
          const add = (name, q, ranked, evidence) =>
            results.set(name, [...(results.get(name) ?? []), { type: q.type, ...score(ranked.slice(0, K), evidence) }]);
          const t0 = Date.now();
          for (const haystack of set.haystacks) {
            const questions = chosen.filter((q) => q.haystack === haystack.id);
            if (!questions.length) continue;
            const own = {
              tenant: `${set.name}/${haystack.id}`,
              db: d1Over(migrateShard(new DatabaseSync(":memory:"))),
            };
            let indexedTurns = 0;
            let nearest = null;
            await runHaystack(
              base,
              set,
              haystack,
              questions,
              async (tenant, asked, turns) => {
                for (const q of asked) {
                  const text = queryText(q.question);
                  const want = new Set(q.evidence);
                  const evidence = turns.filter((t) => want.has(t.id));
                  if (!evidence.length) {
                    stats.skipped++;
                    continue;
                  }
                  const started = performance.now();
                  const hits = await searchTurns(base, tenant, text, K, stats);
                  stats.latencies.push(performance.now() - started);
                  add("cortex (GET /v1/search)", q, hits, evidence);
                  const asked = stems(core, text);
                  for (const t of evidence) {
                    const both = shared(core, asked, t);
                    (hits.includes(t) ? stats.found : stats.missed).push(both.length);
                    if (!hits.includes(t) && stats.examples.length < missesShown)
                      stats.examples.push({ q, text, turn: t, both, top: hits[0] && shared(core, asked, hits[0]) });
                  }
                  indexedTurns = await indexLayouts(layouts, own, turns, indexedTurns);
                  const byLayout = await searchLayouts(layouts, own, text, turns);
                  add(
                    "in-process: searchCortexPage, one database per tenant (CortexDO layout)",
                    q,
                    byLayout.own,
                    evidence,
                  );
                  add(
                    "in-process: searchCortexPage, one shared database (D1 shard layout)",
                    q,
                    byLayout.shared,
                    evidence,
                  );
                  stats.layoutsAsked++;
                  // Turn objects: compared by id (joined as strings they would all read "[object Object]").
                  const ids = (ranked) => ranked.map((t) => t?.id ?? "").join("\n");
                  if (ids(byLayout.own) === ids(byLayout.shared)) stats.layoutsSame++;
                  const bm25 = bm25Index(turns.map((t) => t.text));
                  add(
                    "plain BM25",
                    q,
                    bm25(text, K).map((i) => turns[i]),
                    evidence,
                  );
                  if (rewriteOn) {
                    // The model's rewrite, scripted (query-rewrite.mjs): the key nouns searched
                    // alone, and beside the question, the top 5 of each (what memory_search
                    // returns by default) fused.
                    const key = keyNouns(text) ?? text;
                    const keyHits = await searchTurns(base, tenant, key, K);
                    add(REWRITE_KEY, q, keyHits, evidence);
                    add(REWRITE_BOTH, q, fuse([hits, keyHits]), evidence);
                    const keyBm25 = bm25(key, K);
                    add(
                      REWRITE_BM25_KEY,
                      q,
                      keyBm25.map((i) => turns[i]),
                      evidence,
                    );
                    add(
                      REWRITE_BM25_BOTH,
                      q,
                      fuse([bm25(text, K), keyBm25]).map((i) => turns[i]),
                      evidence,
                    );
                  }
                  for (const [name, background] of Object.entries(backgrounds)) {
                    const { shardOnly, blended } = shardRankings(turns, text, background);
                    add(
                      `in-process: ${name}`,
                      q,
                      (background ? blended : shardOnly).map((i) => turns[i]),
                      evidence,
                    );
                  }
                  // A diagnostic, not a lever to pick on held-out sets: the shipped ranking with
                  // every turn weighted alike (core/speaker-weight.ts discounts the assistant's).
                  const weight = leverCore.assistantWeight;
                  leverCore.assistantWeight = () => 1;
                  try {
                    const { blended } = shardRankings(turns, text, core.shippedBackground());
                    add(
                      "in-process: shipped, no speaker weight (diagnostic)",
                      q,
                      blended.map((i) => turns[i]),
                      evidence,
                    );
                  } finally {
                    leverCore.assistantWeight = weight;
                  }
                  {
                    // bench:recall-tune's ranking, alone, searched again with words of its first
                    // hits, and with the nearest words when WORD_VECTORS_DIR is set (neither
                    // adopted: inside the noise on the tuning set), over the same turns.
                    if (nearest?.rows !== turns.length) {
                      nearest?.db.close();
                      nearest = { rows: turns.length, turns: [...turns], db: turnIndex(turns) };
                      nearest.vocab = vectors && vocabularyOf(core, vectors, nearest.turns);
                    }
                    const c = questionContext(core, nearest, text);
                    const bg = core.shippedBackground();
                    const ranked = shippedRanking(core, c, bg);
                    add(
                      TUNE_SHIPPED,
                      q,
                      ranked.map((i) => turns[i]),
                      evidence,
                    );
                    const again = feedbackRanking(core, c, bg, FEEDBACK_PICK);
                    add(
                      TUNE_FEEDBACK,
                      q,
                      again.map((i) => turns[i]),
                      evidence,
                    );
                    if (vectors) {
                      const wider = nearestWordsRanking(core, vectors, c, bg, NEAREST_PICK);
                      add(
                        TUNE_NEAREST,
                        q,
                        wider.map((i) => turns[i]),
                        evidence,
                      );
                    }
                  }
                  if (leversOn) {
                    const levers = leverRankings(turns, text, []);
                    Object.assign(
                      levers,
                      await semanticLevers(semantic, {
                        turns,
                        question: text,
                        shipped: levers["discount 3 unless asked, shard + background counts (shipped)"],
                      }),
                    );
                    for (const [name, ranked] of Object.entries(levers))
                      add(
                        `lever: ${name}`,
                        q,
                        ranked.map((i) => turns[i]),
                        evidence,
                      );
                  }
                }
              },
              stats,
              mode,
            );
            nearest?.db.close();
          }
          const droppedEvidence = stats.dropped.filter((id) => {
            const [h, t] = [id.slice(0, id.indexOf("/")), id.slice(id.indexOf("/") + 1)];
            return chosen.some((q) => q.haystack === h && q.evidence.includes(t));
          }).length;
          console.log(
            `\n${set.name}: loaded ${stats.messages} ${mode === "turns" ? "turns as user messages through POST /v1/conversations/:id/messages (each answered by the offline model)" : "messages through the import route"} in ${((Date.now() - t0) / 1000).toFixed(0)} s; turns left out (broken alternation) ${stats.dropped.length}, of them evidence of a chosen question ${droppedEvidence}; questions with no evidence left ${stats.skipped}`,
          );
          report.push({ set, stats, results, mode });
        }
      },
      semanticOn ? { SEMANTIC_SEARCH: "local" } : {},
    );
  } finally {
    clearInterval(timer);
  }
  printTables(report);
  console.log(
    `\nload average (1 min) during the run, ${cpus().length} cores: min ${Math.min(...samples).toFixed(1)}, mean ${mean(samples).toFixed(1)}, max ${Math.max(...samples).toFixed(1)}`,
  );
}

const f3 = (x) => x.toFixed(3);
const TUNE_SHIPPED = "in-process: bench:recall-tune's shipped ranking";
const TUNE_FEEDBACK = `in-process: the same, again with ${FEEDBACK_PICK.terms} words of its first ${FEEDBACK_PICK.docs} hits at ${FEEDBACK_PICK.beta} x (not adopted)`;
const TUNE_NEAREST = `in-process: the same + ${NEAREST_PICK.k} nearest words (cosine >= ${NEAREST_PICK.floor}, ${NEAREST_PICK.alpha} x; not adopted)`;
const REWRITE_KEY = "cortex, rewrite: key nouns";
const REWRITE_BOTH = "cortex, rewrite: question + key nouns (RRF)";
const REWRITE_BM25_KEY = "plain BM25, rewrite: key nouns";
const REWRITE_BM25_BOTH = "plain BM25, rewrite: question + key nouns (RRF)";
const signed = (x) => `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;

function printTables(report) {
  const CORTEX = "cortex (GET /v1/search)";
  console.log(
    "\nrecall@5 = share of a question's evidence turns in the top 5, hit@5 = at least one; margin = cortex - BM25 recall@5",
  );
  console.log(
    "| set | role | loaded as | questions | messages | cortex recall@5 | cortex hit@5 | BM25 recall@5 | BM25 hit@5 | margin |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const { set, stats, results, mode } of report) {
    const c = results.get(CORTEX) ?? [];
    const b = results.get("plain BM25") ?? [];
    const r = (rs) => mean(rs.map((x) => x.recall));
    const h = (rs) => mean(rs.map((x) => x.hit));
    console.log(
      `| ${set.name} | ${set.name === TUNING_SET ? "tuning" : "held out"} | ${mode === "turns" ? "turns (user messages)" : "exchanges (import)"} | ${c.length} | ${stats.messages} | ${f3(r(c))} | ${f3(h(c))} | ${f3(r(b))} | ${f3(h(b))} | ${signed(r(c) - r(b))} |`,
    );
  }
  console.log("\nby question type, recall@5 (cortex | BM25 | margin):");
  for (const { set, results } of report) {
    const c = results.get(CORTEX) ?? [];
    const b = results.get("plain BM25") ?? [];
    for (const type of [...new Set(c.map((x) => x.type))].sort()) {
      const rc = mean(c.filter((x) => x.type === type).map((x) => x.recall));
      const rb = mean(b.filter((x) => x.type === type).map((x) => x.recall));
      console.log(
        `  ${set.name.padEnd(12)} ${type.padEnd(22)} n=${String(c.filter((x) => x.type === type).length).padStart(3)}  ${f3(rc)} | ${f3(rb)} | ${signed(rc - rb)}`,
      );
    }
  }
  if (report.some(({ results }) => results.has(REWRITE_KEY))) {
    const rows = [CORTEX, REWRITE_KEY, REWRITE_BOTH, "plain BM25", REWRITE_BM25_KEY, REWRITE_BM25_BOTH];
    console.log(
      "\nthe scripted rewrite (--rewrite), recall@5 / hit@5; margin of the fused row over plain BM25 on the question:",
    );
    console.log(`| set | type | n | ${rows.join(" | ")} | margin |`);
    console.log(`|---|---|---|${rows.map(() => "---|").join("")}---|`);
    for (const { set, results } of report) {
      const types = [...new Set((results.get(CORTEX) ?? []).map((x) => x.type))].sort();
      for (const type of ["all", ...types]) {
        const of = (name) => (results.get(name) ?? []).filter((x) => type === "all" || x.type === type);
        const r = (name) => mean(of(name).map((x) => x.recall));
        console.log(
          `| ${set.name} | ${type} | ${of(CORTEX).length} | ${rows.map((name) => `${f3(r(name))} / ${f3(mean(of(name).map((x) => x.hit)))}`).join(" | ")} | ${signed(r(REWRITE_BOTH) - r("plain BM25"))} |`,
        );
      }
    }
  }
  console.log("\nin-process rankings over the same turns (recall@5 / hit@5):");
  for (const { set, results } of report)
    for (const [name, rs] of results)
      if (name !== CORTEX && !name.startsWith("cortex,") && !name.startsWith("plain BM25"))
        console.log(
          `  ${set.name.padEnd(12)} ${name.padEnd(70)} ${f3(mean(rs.map((x) => x.recall)))} / ${f3(mean(rs.map((x) => x.hit)))}`,
        );
  console.log(
    "\nlexical overlap, cortex: how many of the question's content stems an evidence turn holds (found in the top 5 / missed)",
  );
  for (const { set, stats } of report) {
    const none = stats.missed.filter((n) => n === 0).length;
    console.log(
      `  ${set.name.padEnd(12)} found ${stats.found.length} turns, mean ${mean(stats.found).toFixed(2)} stems shared | missed ${stats.missed.length}, mean ${mean(stats.missed).toFixed(2)}, ${none} (${((100 * none) / Math.max(1, stats.missed.length)).toFixed(0)}%) sharing none`,
    );
    for (const e of stats.examples)
      console.log(
        `    miss ${e.q.id} [${e.q.type}] "${e.text.slice(0, 120)}"\n      evidence ${e.turn.id} (${e.turn.role}): "${e.turn.text.replace(/\s+/g, " ").slice(0, 160)}"\n      shared stems: ${e.both.join(" ") || "(none)"}; the top hit shares: ${e.top?.join(" ") || "(no hit)"}`,
      );
  }
  for (const { set, stats } of report)
    console.log(
      `${set.name}: the two layouts ranked the same top ${K} (same turns, same order) on ${stats.layoutsSame} of ${stats.layoutsAsked} questions`,
    );
  for (const { set, stats, mode } of report)
    if (mode === "turns")
      console.log(
        `${set.name}: places in the cortex's top ${K} taken by the offline model's replies: ${stats.replyHits} of ${K * stats.latencies.length}`,
      );
  for (const { set, stats } of report)
    if (stats.latencies.length)
      console.log(
        `${set.name}: search latency over ${stats.latencies.length} calls: p50 ${quantile(stats.latencies, 0.5).toFixed(1)} ms, p99 ${quantile(stats.latencies, 0.99).toFixed(1)} ms`,
      );
}
