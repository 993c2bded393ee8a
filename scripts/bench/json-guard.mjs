// bench:json-guard — the JSON value guard (core/json-guard.ts: depth and well-formed Unicode, run on
// every request body and websocket frame before its schema) on large values, beside JSON.parse of
// the same text, so the ratio says what the guard adds to reading a body. Values: a 4 MB frame of
// 2 million zeros, 12 MB of them (the largest HTTP body), and 200,000 small objects.
import { build } from "esbuild";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "../stack.mjs";

const best = (runs, fn) => {
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
};

export async function benchJsonGuard() {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-json-guard-"));
  try {
    const outfile = join(dir, "json-guard.mjs");
    await build({
      entryPoints: [join(ROOT, "core/json-guard.ts")],
      bundle: true,
      format: "esm",
      platform: "node",
      outfile,
      logLevel: "silent",
    });
    const { jsonValueProblem } = await import(pathToFileURL(outfile).href);
    const cases = [
      ["4 MB frame, 2M zeros", `{"type":"ping","x":[${"0,".repeat(1_999_999)}0]}`],
      ["12 MB body, 6M zeros", `{"content":"hi","x":[${"0,".repeat(5_999_999)}0]}`],
      [
        "200,000 small objects",
        JSON.stringify({ messages: Array.from({ length: 200_000 }, (_, i) => ({ role: "user", n: i, tags: ["a"] })) }),
      ],
    ];
    console.log("| value | bytes | JSON.parse ms | guard ms | guard / parse |");
    console.log("|---|---|---|---|---|");
    for (const [name, text] of cases) {
      const value = JSON.parse(text);
      const parse = best(3, () => JSON.parse(text));
      const guard = best(3, () => {
        if (jsonValueProblem(value, "body") !== null) throw new Error(`${name}: the guard found a problem`);
      });
      console.log(
        `| ${name} | ${text.length.toLocaleString("en")} | ${parse.toFixed(0)} | ${guard.toFixed(0)} | ${(guard / parse).toFixed(2)} |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
