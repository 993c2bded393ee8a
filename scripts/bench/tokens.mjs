// bench:tokens — the token economics of a lean prefix, measured on the offline model, whose
// prompt-cache accounting follows Anthropic's rules (breakpoints, 5-minute lifetime, minimum
// cacheable length). Token counts use the cl100k_base BPE tokenizer as a stated stand-in for
// Claude's unpublished one (core/tokens.ts); "usage" figures are what the model reported.
import { build } from "esbuild";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "../stack.mjs";
import { get, post, withStack } from "./common.mjs";

const CONVERSATIONS = Number(process.env.TOKENS_CONVERSATIONS ?? 50);
const TURNS = Number(process.env.TOKENS_TURNS ?? 20);
const PARALLEL = 10;

// Every FOLDING_EVERY-th conversation folds every few turns, so the summary acknowledgement's
// breakpoint is exercised too (the others never reach the default fold threshold in 20 turns).
const FOLDING_EVERY = 5;
const FOLDING_SETTINGS = { foldThresholdChars: 6_000, tailMessages: 4 };

/** The project's tokenizer and the cache's block counting, bundled for Node so the bench counts exactly as the model does. */
async function loadTokenizer() {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-tokens-"));
  const outfile = join(dir, "tokens.mjs");
  const contents =
    'export * from "./core/tokens.ts"; export { blockPrefixTokens } from "./core/offline-model/cache.ts";';
  await build({
    stdin: { contents, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "node",
    outfile,
    logLevel: "silent",
  });
  const mod = await import(pathToFileURL(outfile).href);
  rmSync(dir, { recursive: true, force: true });
  return mod;
}

const total = (u) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

/**
 * The fixed breakpoints of the turn's requests, as token prefixes: the system prompt's and, once a
 * fold has happened, the summary acknowledgement's. Read from /replay (the next request but for the
 * new prompt), counted as the model counts blocks. The last-message breakpoint moves every request.
 */
function fixedBreakpoints(tok, replay) {
  const prefixes = tok.blockPrefixTokens(replay);
  const marked = [
    ...replay.tools,
    ...replay.system,
    ...replay.messages.flatMap((m) => (typeof m.content === "string" ? [{}] : m.content)),
  ].flatMap((block, i) => (block.cache_control ? [prefixes[i]] : []));
  // The last mark sits on the last replayed message: in the real request that block is no longer last.
  const fixed = replay.messages.length ? marked.slice(0, -1) : marked;
  // The summary's text identifies the acknowledgement entry: a new fold means a new entry to write.
  const summary = fixed.length > 1 ? JSON.stringify(replay.messages[0].content) : null;
  return { system: fixed[0], ack: fixed.length > 1 ? fixed[1] : null, summary };
}

/** A conversation of TURNS turns; every third turn uses a tool, so steps inside turns count too. */
async function converse(base, tok, n) {
  const settings = n % FOLDING_EVERY === FOLDING_EVERY - 1 ? FOLDING_SETTINGS : undefined;
  const id = (await post(base, "/v1/conversations", { title: `tokens ${n}`, settings })).json.id;
  const requests = [];
  const folding = settings !== undefined;
  let lastSummary = null;
  for (let t = 0; t < TURNS; t++) {
    const content =
      t % 3 === 2
        ? `turn ${t}: look that up\n@tool memory_search {"query":"turn ${t - 1} conversation ${n}"}\n@reply-chars 300`
        : `turn ${t} of conversation ${n}: a question about item ${t}\n@reply-chars ${200 + ((t * 97) % 600)}`;
    const breakpoints = fixedBreakpoints(tok, await get(base, `/v1/conversations/${id}/replay`));
    const { json } = await post(base, `/v1/conversations/${id}/messages`, { content });
    let step = 0;
    for (const m of json.messages) {
      if (m.role !== "assistant") continue;
      // The first request after a fold writes the new acknowledgement entry; only later ones can read it.
      const newSummary = breakpoints.summary !== null && breakpoints.summary !== lastSummary;
      requests.push({ usage: m.usage, ...breakpoints, folding, first: t === 0 && step === 0, ackWritable: newSummary });
      lastSummary = breakpoints.summary;
      step++;
    }
  }
  return requests;
}

/**
 * Hits per breakpoint. A read is a prefix, so a request's system entry was hit when it read at least
 * the system prefix, its acknowledgement entry when it read at least through the acknowledgement,
 * and the previous request's last-message entry when the read reached past both into the
 * conversation (nothing else can be read there). A conversation's first request has no earlier
 * message entry to read, and the first request after a fold no earlier acknowledgement entry, so
 * neither is counted for that breakpoint.
 */
function breakpointHits(requests) {
  const rate = (hit, of) => `${((100 * hit) / Math.max(1, of)).toFixed(2)}% (${hit}/${of})`;
  const read = (r) => r.usage.cache_read_input_tokens;
  const system = requests.filter((r) => read(r) >= r.system).length;
  const withAck = requests.filter((r) => r.ack !== null && !r.ackWritable);
  const ack = withAck.filter((r) => read(r) >= r.ack).length;
  const later = requests.filter((r) => !r.first);
  const last = later.filter((r) => read(r) > Math.max(r.system, r.ack ?? 0)).length;
  return { system: rate(system, requests.length), ack: rate(ack, withAck.length), last: rate(last, later.length) };
}

export async function benchTokens() {
  const tok = await loadTokenizer();
  await withStack(async (base) => {
    const fresh = (await post(base, "/v1/conversations", { title: "fresh" })).json.id;
    const replay = await get(base, `/v1/conversations/${fresh}/replay`);
    const systemText = replay.system.map((b) => b.text).join("\n");
    const systemTokens = tok.countTokens(systemText);
    const toolTokens = replay.tools.reduce((n, t) => n + tok.countToolTokens(t), 0);
    const first = await post(base, `/v1/conversations/${fresh}/messages`, { content: "hello" });
    const firstTokens = total(first.json.messages[1].usage);
    console.log(
      "tokenizer: cl100k_base BPE (js-tiktoken), a stated stand-in for Claude's tokenizer; counts are approximate in that sense",
    );
    console.log(
      `system prompt: ${systemTokens} tokens, ${systemText.length} chars (target <= 4,000) ${systemTokens <= 4000 ? "MET" : "MISSED"}`,
    );
    console.log(`core tool schemas: ${replay.tools.length} tools, ${toolTokens} tokens`);
    console.log(
      `fresh conversation's whole first request ("hello"): ${firstTokens} tokens as the model counted it (target <= 6,000) ${firstTokens <= 6000 ? "MET" : "MISSED"}`,
    );

    const requests = [];
    const t0 = Date.now();
    for (let i = 0; i < CONVERSATIONS; i += PARALLEL) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(PARALLEL, CONVERSATIONS - i) }, (_, k) => converse(base, tok, i + k)),
      );
      for (const r of batch) requests.push(...r);
    }
    const all = requests.map((r) => r.usage);
    const read = all.reduce((n, u) => n + u.cache_read_input_tokens, 0);
    const write = all.reduce((n, u) => n + u.cache_creation_input_tokens, 0);
    const prompt = all.reduce((n, u) => n + total(u), 0);
    const hits = breakpointHits(requests);
    const share = (rs) => {
      const r = rs.reduce((n, x) => n + x.usage.cache_read_input_tokens, 0);
      return `${(
        (100 * r) /
          Math.max(
            1,
            rs.reduce((n, x) => n + total(x.usage), 0),
          )
      ).toFixed(2)}%`;
    };
    console.log(
      `\ncache over ${CONVERSATIONS} conversations x ${TURNS} turns with tool use (every ${FOLDING_EVERY}th folding every few turns): ${all.length} model requests in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );
    console.log(
      `hits per breakpoint: system prompt ${hits.system}; summary acknowledgement ${hits.ack} of requests after a fold's first; previous request's last message ${hits.last} of requests after a conversation's first`,
    );
    console.log(
      `token-weighted hit rate: ${((100 * read) / prompt).toFixed(2)}% (${read} of ${prompt} prompt tokens read from the cache; ${write} written; target >= 90%) ${read / prompt >= 0.9 ? "MET" : "MISSED"}`,
    );
    console.log(
      `  by kind: default settings ${share(requests.filter((r) => !r.folding))}, folding conversations ${share(requests.filter((r) => r.folding))}`,
    );

    // An hourly automation's run on a fresh channel conversation, through the real trigger path.
    const channel = `bench-hourly-${Date.now()}`;
    const automation = (
      await post(base, "/v1/automations", {
        name: "hourly digest",
        schedule: "0 * * * *",
        prompt: "Hourly check-in: summarize anything new since the last run and list open items.",
        channel,
      })
    ).json;
    await fetch(`${base}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("*/5 * * * *")}`);
    let run;
    for (let i = 0; i < 100 && !run; i++) {
      await new Promise((r) => setTimeout(r, 200));
      run = (await get(base, `/v1/automations/${automation.id}/runs`)).data.find(
        (r) => r.status === "succeeded" || r.status === "failed",
      );
    }
    const runTokens = run?.usage ? total(run.usage) : NaN;
    console.log(
      `\nhourly automation run on a fresh channel conversation: ${runTokens} prompt tokens (status ${run?.status}; target <= 5,000) ${runTokens <= 5000 ? "MET" : "MISSED"}`,
    );
  });
}
