// bench:counting — the token counter (core/tokens.ts: cl100k through js-tiktoken, used for every
// budget and by the offline model on every request) on texts whose runs the BPE merges slowly,
// beside the counter's earlier cut (only runs of 257+ non-space or space characters, in 256-character
// slices), measured in the same process so the ratio is side by side. Texts of 256 KiB: prose, one
// run of a letter (a file_read of minified data), CJK without spaces, minified JSON, a dashed rule.
import { build } from "esbuild";
import { Tiktoken } from "js-tiktoken/lite";
import cl100kBase from "js-tiktoken/ranks/cl100k_base";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "../stack.mjs";

const SIZE = 256 * 1024;

/** The counter before runs of letters, punctuation and whitespace were cut at 32 characters. */
function earlierCounter() {
  const encoder = new Tiktoken(cl100kBase);
  const encode = (text) => encoder.encode(text, [], []).length;
  const LONG = /\S{257,}|\s{257,}/g;
  return (text) => {
    let total = 0;
    let last = 0;
    for (const match of text.matchAll(LONG)) {
      total += encode(text.slice(last, match.index));
      for (let i = 0; i < match[0].length; i += 256) total += encode(match[0].slice(i, i + 256));
      last = match.index + match[0].length;
    }
    return total + encode(text.slice(last));
  };
}

const fill = (unit) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);

function texts() {
  let letters = "";
  for (let i = 0; letters.length < SIZE; i++) letters += "abcdefghijklmnopqrstuvwxyz"[(i * 7919) % 26];
  const records = [];
  for (let i = 0; JSON.stringify(records).length < SIZE; i++)
    records.push({ id: i, name: `item${i}`, tags: ["alpha", "beta"], ok: i % 2 === 0 });
  return [
    ["English prose", fill("The tide comes in twice a day, and the harbour fills with boats. ")],
    ["one run of the letter x", fill("x")],
    ["letters without spaces", letters],
    ["Chinese without spaces", fill("潮水每天涨两次港口里停满了渔船")],
    ["minified JSON", JSON.stringify(records).slice(0, SIZE)],
    ["a dashed rule", fill("-=")],
  ];
}

const timed = (fn) => {
  const t0 = performance.now();
  const value = fn();
  return { ms: performance.now() - t0, value };
};

export async function benchCounting() {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-counting-"));
  try {
    const outfile = join(dir, "tokens.mjs");
    await build({
      entryPoints: [join(ROOT, "core/tokens.ts")],
      bundle: true,
      format: "esm",
      platform: "node",
      outfile,
      logLevel: "silent",
    });
    const { countTokens } = await import(pathToFileURL(outfile).href);
    const earlier = earlierCounter();
    // Both encoders built and warmed before any timing.
    countTokens("warm up");
    earlier("warm up");
    console.log(
      `Each text ${SIZE.toLocaleString("en")} characters; one count each (the counter memoizes, so never twice).`,
    );
    console.log("| text | earlier ms | now ms | earlier / now | tokens earlier | tokens now | count change |");
    console.log("|---|---|---|---|---|---|---|");
    for (const [name, text] of texts()) {
      const before = timed(() => earlier(text));
      const now = timed(() => countTokens(text));
      const change = ((now.value - before.value) / before.value) * 100;
      console.log(
        `| ${name} | ${before.ms.toFixed(0)} | ${now.ms.toFixed(0)} | ${(before.ms / now.ms).toFixed(1)} | ${before.value} | ${now.value} | ${change >= 0 ? "+" : ""}${change.toFixed(2)}% |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
