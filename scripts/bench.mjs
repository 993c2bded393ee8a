// `npm run bench <name>`: benchmarks against the real local stack (loopback only, bounded in count
// and time; each starts its own throwaway stack and prints its figures).
//   turn      server-side time per turn at ages 10 / 1,000 / 5,000 messages, and the ratio
//   sawtooth  2,000 scripted turns: replay size per turn, folds, stubs, the sawtooth plot
//   recall-public  evidence recall@5 on public memory benchmarks (RECALL_DATA_DIR, docs/recall-sets.md) for the cortex and a plain BM25
//   recall-tune    the ranking's levers on the tuning set (RealMem) only, in-process, with a paired bootstrap (no stack)
//   recall-semantic  lexical, semantic (hashed and a learned sentence encoder) and fused recall@5 on the public sets (RECALL_DATA_DIR; no stack)
//   record-embeddings  the texts a recall-semantic run embeds, recorded with Workers AI over REST (an account) or the local encoder
//   recall-folds   the cortex's term statistics on every LongMemEval question, each fold with a held-out background (no stack)
//   ranking-cost   one search in a ~12,000-message shard, in-process: the shipped ranking against the query it replaced,
//                  and the same tenant in a shared shard
//   recall    stub batching's prompt-cache effect, and the cortex's recall@5 on definite references
//   tokens    the lean prefix: system prompt and first-request tokens, cache hit rates
//   attachments  PDF page count and page reads by bytes read, indexing throughput, a 1 GB text file
//   counting  the token counter on 256 KiB texts with long runs (letters, CJK, minified JSON), beside its earlier cut (no stack)
//   json-guard  the JSON value guard on a 4 MB frame, a 12 MB body and 200,000 objects, beside JSON.parse (no stack)
//   hot-paths  five paths once superlinear (replay and thinking-guard merges, the token memo, the offline
//              model's thinking-chain check, sentence splitter and title) at n and 2n, and the ratio (no stack)
//   compact   the deterministic part of a compaction pass on a 1 MB turn, and the tokens it saves
//   load      parallel conversations and senders (JSON, SSE, websocket) with folds and indexing
//             running, then an audit of transcript, replay source and index (flags: see load.mjs)
//   tools     3 MCP servers with 200 tools: first-request tokens, tool_search hit@3, a 50-step turn of 40 KB results
//   scale     1,000 tenants, 100,000 messages: cortex rows and bytes per message, search p50/p99 by
//             tenant size, rows written per turn to DB and the shard, for the D1 shards or (older
//             checkouts) the CortexDO files (BENCH_SCALE_TENANTS / BENCH_SCALE_MESSAGES for less)
//   pdf-corpus  the PDF reader against pdf.js and poppler over the real-world PDFs in PDF_CORPUS_DIR (no stack)
//   scale     per-invocation work as tenants grow: the cron tick's automation claims at 100 and 1,000 tenants
import { benchAttachments } from "./bench/attachments.mjs";
import { benchCompact } from "./bench/compact.mjs";
import { benchCounting } from "./bench/counting.mjs";
import { benchHotPaths } from "./bench/hot-paths.mjs";
import { benchJsonGuard } from "./bench/json-guard.mjs";
import { benchLoad } from "./bench/load.mjs";
import { benchPdfCorpus } from "./bench/pdf-corpus.mjs";
import { benchRecall } from "./bench/recall.mjs";
import { benchRankingCost } from "./bench/ranking-cost.mjs";
import { benchRecallFolds } from "./bench/recall-folds.mjs";
import { benchRecallPublic } from "./bench/recall-public.mjs";
import { benchRecallTune } from "./bench/recall-tune.mjs";
import { benchRecallSemantic, benchRecordEmbeddings } from "./bench/recall-semantic.mjs";
import { benchSawtooth } from "./bench/sawtooth.mjs";
import { benchScale } from "./bench/scale.mjs";
import { benchTokens } from "./bench/tokens.mjs";
import { benchTools } from "./bench/tools.mjs";
import { benchTurn } from "./bench/turn.mjs";

const benches = {
  turn: benchTurn,
  sawtooth: benchSawtooth,
  recall: benchRecall,
  "recall-public": benchRecallPublic,
  "recall-folds": benchRecallFolds,
  "recall-tune": benchRecallTune,
  "recall-semantic": benchRecallSemantic,
  "record-embeddings": benchRecordEmbeddings,
  "ranking-cost": benchRankingCost,
  tokens: benchTokens,
  attachments: benchAttachments,
  compact: benchCompact,
  counting: benchCounting,
  "json-guard": benchJsonGuard,
  "hot-paths": benchHotPaths,
  load: benchLoad,
  "pdf-corpus": benchPdfCorpus,
  tools: benchTools,
  scale: benchScale,
};
const name = process.argv[2];
if (!benches[name]) {
  console.log(`usage: npm run bench -- <${Object.keys(benches).join("|")}>`);
  process.exit(2);
}
await benches[name](process.argv.slice(3));
