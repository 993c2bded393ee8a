// bench:hot-paths — five paths a CPU review found superlinear in their input, each timed at a size n
// and at 2n so the ratio says how its cost grows (about 2 is linear, about 4 quadratic):
//   - replay merging a run of same-role messages (core/replay.ts toWireMessages: an import of lone
//     prompts), and the thinking guard merging the messages left around thinking it leaves out
//     (core/thinking-guard.ts keepValidThinking);
//   - the offline model answering the same tool loop a second time (the token counter's memo,
//     core/tokens.ts: one call counts the request three times);
//   - the offline model's thinking-chain check on T thinking blocks (offline-model/thinking-check.ts);
//   - its summary of a message with a long run of "!" not followed by a space (offline-model/summarize.ts);
//   - its title of a message with a long run of "_" (offline-model/title.ts).
// In-process, no stack: the modules bundled with esbuild. Each row prints a digest of what the path
// answered, so a run on other code shows whether the outputs changed.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { build } from "esbuild";
import { ROOT } from "../stack.mjs";

const ENTRY = `
export { toWireMessages } from "./core/replay";
export { keepValidThinking } from "./core/thinking-guard";
export { handleMessagesRequest, resetOfflineCache } from "./core/offline-model";
export { startPrefix, extendPrefix, prefixHex } from "./core/offline-model/binding";
export { sealThinking, textHash, thinkingIdOf } from "./core/offline-model/thinking-seal";
export { checkThinking } from "./core/offline-model/thinking-check";
export { resolveModel } from "./core/offline-model/model";
export { summarize } from "./core/offline-model/summarize";
export { offlineTitle } from "./core/offline-model/title";
`;

const digest = (value) => createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 10);

const words = "context window token budget summary history message turn reply archive search index cache prefix ".split(
  " ",
);
const prose = (n, seed) => {
  let s = "";
  let i = seed;
  while (s.length < n) s += words[(i = (i * 1103515245 + 12345) >>> 0) % 14] + (i % 7 === 0 ? ". " : " ");
  return s.slice(0, n);
};

/** n lone prompts, as an import of a transcript of user messages only stores them. */
const lonePrompts = (n) =>
  Array.from({ length: n }, (_, k) => ({
    id: `msg_${String(k + 1).padStart(26, "0")}`,
    seq: k + 1,
    role: "user",
    content: [{ type: "text", text: `prompt ${k + 1}` }],
    createdAt: "2026-01-01T00:00:00Z",
  }));

/** n prompts, each answered by thinking alone that cannot go back: the prompts merge into one message. */
const thinkingOnlyReplies = (n) => ({
  model: "m",
  max_tokens: 10,
  system: [{ type: "text", text: "sys" }],
  tools: [],
  messages: Array.from({ length: n }, (_, k) => [
    { role: "user", content: [{ type: "text", text: `prompt ${k}` }] },
    { role: "assistant", content: [{ type: "thinking", thinking: "", signature: `sig${k}` }] },
  ])
    .flat()
    .concat([{ role: "user", content: [{ type: "text", text: "next" }] }]),
});

/** A tool loop of n steps, each with a 500-character result, as the offline model receives it. */
function toolLoop(n) {
  const messages = [{ role: "user", content: [{ type: "text", text: "do it" }] }];
  for (let i = 0; i < n; i++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: "look" },
        { type: "tool_use", id: `toolu_${i}`, name: "file_read", input: { path: `/f${i}` } },
      ],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: prose(500, i) }],
    });
  }
  const tools = [
    {
      name: "file_read",
      description: "read",
      input_schema: { type: "object", properties: { path: { type: "string" } } },
    },
  ];
  return JSON.stringify({
    model: "offline-2000k",
    max_tokens: 1000,
    system: [{ type: "text", text: "sys" }],
    tools,
    messages,
  });
}

/** T exchanges whose replies each carry one sealed thinking block, chained as the offline model chains them. */
function thinkingConversation(m, pairs) {
  const system = [{ type: "text", text: "s" }];
  const messages = [];
  let state = m.startPrefix({ system, tools: [] });
  let previous = "";
  let root = "";
  for (let k = 0; k < pairs; k++) {
    const prompt = { type: "text", text: `q${k}` };
    messages.push({ role: "user", content: [prompt] });
    state = m.extendPrefix(state, "user", prompt);
    const signature = m.sealThinking({
      k: "t",
      m: "claude-sonnet-5-5",
      b: 1,
      h: m.textHash("t"),
      n: 5,
      p: m.prefixHex(state),
      q: previous,
      r: root,
      i: `r${k}`,
      x: 0,
      c: 1,
    });
    const id = m.thinkingIdOf(signature);
    root ||= id;
    previous = id;
    const answer = { type: "text", text: `a${k}` };
    messages.push({ role: "assistant", content: [{ type: "thinking", thinking: "t", signature }, answer] });
    state = m.extendPrefix(state, "assistant", answer);
  }
  messages.push({ role: "user", content: [{ type: "text", text: "next" }] });
  return { model: "offline-2000k", max_tokens: 100, system, messages };
}

async function offlineCall(m, raw) {
  const response = await m.handleMessagesRequest(
    new Request("https://offline.invalid/v1/messages", { method: "POST", body: raw }),
  );
  const body = await response.json();
  return { status: response.status, input_tokens: body.usage?.input_tokens };
}

/** Each path: its label, the size of n, what it is n of, the input at a size, and the timed call. */
function paths(m) {
  const model = m.resolveModel("offline-2000k");
  return [
    {
      name: "replay: merge lone prompts",
      n: 16_000,
      unit: "messages",
      input: lonePrompts,
      run: (history) => m.toWireMessages(history),
    },
    {
      name: "thinking guard: merge around dropped thinking",
      n: 16_000,
      unit: "prompts",
      input: thinkingOnlyReplies,
      run: (request) => m.keepValidThinking(request, new Map()),
    },
    {
      name: "offline call repeated (token memo)",
      n: 2_000,
      unit: "tool steps",
      // The first call fills the memo; the second, the next step's request re-sending it, is timed.
      input: (n) => {
        m.resetOfflineCache();
        return toolLoop(n);
      },
      prepare: (raw) => offlineCall(m, raw),
      run: (raw) => offlineCall(m, raw),
    },
    {
      name: "offline thinking-chain check",
      n: 4_000,
      unit: "thinking blocks",
      input: (n) => thinkingConversation(m, n),
      run: (request) => {
        const check = m.checkThinking(request, model);
        return {
          dropped: [...check.dropped],
          tokens: [...check.tokens.values()],
          previous: check.previous,
          root: check.root,
        };
      },
    },
    {
      name: "offline summary: run of ! then a letter",
      n: 40_000,
      unit: "characters",
      input: (n) => ({ messages: [{ role: "user", content: `Hello ${"!".repeat(n)}x` }] }),
      run: (request) => m.summarize(request, { maxChars: 4000, sections: [] }),
    },
    {
      name: "offline title: run of _ then a letter",
      n: 40_000,
      unit: "characters",
      input: (n) => ({ messages: [{ role: "user", content: `Fix this: a${"_".repeat(n)}b` }] }),
      run: (request) => m.offlineTitle(request),
    },
  ];
}

// A collection before each timed run, so one run does not pay for the garbage of building the input.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc");

const ms = (value) => (value < 10 ? value.toFixed(1) : value.toFixed(0));

/**
 * The best of five runs at a size, or of fewer once a run takes over a second (the old code's
 * quadratic sizes). Timed in CPU milliseconds of this process (what a Durable Object's CPU limit
 * counts, and steadier than wall time on a loaded machine), with the wall time beside it.
 */
async function timed(path, size) {
  let cpu = Infinity;
  let wall = Infinity;
  let output;
  for (let run = 0; run < 5; run++) {
    const input = path.input(size);
    if (path.prepare) await path.prepare(input);
    collectGarbage();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    output = await path.run(input);
    wall = Math.min(wall, performance.now() - t0);
    const used = process.cpuUsage(c0);
    cpu = Math.min(cpu, (used.user + used.system) / 1_000);
    if (cpu > 1_000) break;
  }
  return { cpu, wall, digest: digest(output) };
}

export async function benchHotPaths() {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-hot-paths-"));
  try {
    const outfile = join(dir, "hot-paths.mjs");
    await build({
      stdin: { contents: ENTRY, resolveDir: ROOT, loader: "ts", sourcefile: "hot-paths-entry.ts" },
      bundle: true,
      format: "esm",
      platform: "node",
      outfile,
      logLevel: "silent",
    });
    const m = await import(pathToFileURL(outfile).href);
    // The encoder and the bundle's code warmed before any timing.
    await offlineCall(m, toolLoop(20));
    console.log(
      "The best of 5 runs of each path (fewer once one takes over a second) at n and at 2n, in CPU ms; ratio = CPU ms at 2n / CPU ms at n (about 2 is linear, about 4 quadratic).",
    );
    console.log("| path | n | CPU ms at n | CPU ms at 2n | ratio | wall ms at n / 2n | output digest n / 2n |");
    console.log("|---|---|---|---|---|---|---|");
    for (const path of paths(m)) {
      await timed(path, path.n / 16); // warms the path's code, untimed
      const a = await timed(path, path.n);
      const b = await timed(path, 2 * path.n);
      console.log(
        `| ${path.name} | ${path.n.toLocaleString("en")} ${path.unit} | ${ms(a.cpu)} | ${ms(b.cpu)} | ${(b.cpu / a.cpu).toFixed(1)} | ${ms(a.wall)} / ${ms(b.wall)} | ${a.digest} / ${b.digest} |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
