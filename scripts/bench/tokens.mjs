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

/** The project's own tokenizer module, bundled for Node so the bench counts exactly as the model does. */
async function loadTokenizer() {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-tokens-"));
  const outfile = join(dir, "tokens.mjs");
  await build({ entryPoints: [join(ROOT, "core/tokens.ts")], bundle: true, format: "esm", platform: "node", outfile, logLevel: "silent" });
  const mod = await import(pathToFileURL(outfile).href);
  rmSync(dir, { recursive: true, force: true });
  return mod;
}

const total = (u) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

/** A conversation of TURNS turns; every third turn uses a tool, so steps inside turns count too. */
async function converse(base, n) {
  const id = (await post(base, "/v1/conversations", { title: `tokens ${n}` })).json.id;
  const usages = [];
  for (let t = 0; t < TURNS; t++) {
    const content =
      t % 3 === 2 ? `turn ${t}: look that up\n@tool memory_search {"query":"turn ${t - 1} conversation ${n}"}\n@reply-chars 300` : `turn ${t} of conversation ${n}: a question about item ${t}\n@reply-chars ${200 + ((t * 97) % 600)}`;
    const { json } = await post(base, `/v1/conversations/${id}/messages`, { content });
    for (const m of json.messages) if (m.role === "assistant") usages.push(m.usage);
  }
  return usages;
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
    console.log("tokenizer: cl100k_base BPE (js-tiktoken), a stated stand-in for Claude's tokenizer; counts are approximate in that sense");
    console.log(`system prompt: ${systemTokens} tokens, ${systemText.length} chars (target <= 4,000) ${systemTokens <= 4000 ? "MET" : "MISSED"}`);
    console.log(`core tool schemas: ${replay.tools.length} tools, ${toolTokens} tokens`);
    console.log(`fresh conversation's whole first request ("hello"): ${firstTokens} tokens as the model counted it (target <= 6,000) ${firstTokens <= 6000 ? "MET" : "MISSED"}`);

    const all = [];
    const t0 = Date.now();
    for (let i = 0; i < CONVERSATIONS; i += PARALLEL) {
      const batch = await Promise.all(Array.from({ length: Math.min(PARALLEL, CONVERSATIONS - i) }, (_, k) => converse(base, i + k)));
      for (const u of batch) all.push(...u);
    }
    const hits = all.filter((u) => u.cache_read_input_tokens > 0).length;
    const read = all.reduce((n, u) => n + u.cache_read_input_tokens, 0);
    const write = all.reduce((n, u) => n + u.cache_creation_input_tokens, 0);
    const prompt = all.reduce((n, u) => n + total(u), 0);
    console.log(`\ncache over ${CONVERSATIONS} conversations x ${TURNS} turns with tool use: ${all.length} model requests in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    console.log(`request-level hit rate: ${((100 * hits) / all.length).toFixed(2)}% (${hits}/${all.length} requests read from the cache; target >= 99%) ${hits / all.length >= 0.99 ? "MET" : "MISSED"}`);
    console.log(`token-weighted hit rate: ${((100 * read) / prompt).toFixed(2)}% (${read} of ${prompt} prompt tokens read from the cache; ${write} written)`);

    // An hourly automation's run on a fresh channel conversation, through the real trigger path.
    const channel = `bench-hourly-${Date.now()}`;
    const automation = (await post(base, "/v1/automations", { name: "hourly digest", schedule: "0 * * * *", prompt: "Hourly check-in: summarize anything new since the last run and list open items.", channel })).json;
    await fetch(`${base}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("*/5 * * * *")}`);
    let run;
    for (let i = 0; i < 100 && !run; i++) {
      await new Promise((r) => setTimeout(r, 200));
      run = (await get(base, `/v1/automations/${automation.id}/runs`)).data.find((r) => r.status === "succeeded" || r.status === "failed");
    }
    const runTokens = run?.usage ? total(run.usage) : NaN;
    console.log(`\nhourly automation run on a fresh channel conversation: ${runTokens} prompt tokens (status ${run?.status}; target <= 5,000) ${runTokens <= 5000 ? "MET" : "MISSED"}`);
  });
}
