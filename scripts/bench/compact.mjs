// bench:compact — the deterministic part of a compaction pass (image stripping and proportional
// truncation; no model call) on a turn of about 1 MB, timed on the project's own compactor code,
// and the tokens it saves at the seed's defaults (1.5 chars/token, trigger 75%, target 50%).
import { build } from "esbuild";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "../stack.mjs";

export async function benchCompact() {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-compact-"));
  try {
    const outfile = join(dir, "compactor.mjs");
    await build({
      entryPoints: [join(ROOT, "core/compactor.ts")],
      bundle: true,
      format: "esm",
      platform: "node",
      outfile,
      logLevel: "silent",
    });
    const { compactMessages, shouldCompact } = await import(pathToFileURL(outfile).href);
    // 40 tool results of ~25 KB (about 1 MB of turn), a screenshot among them, on a 200K window.
    const messages = [{ role: "user", content: [{ type: "text", text: "read the 40 reports and total the amounts" }] }];
    for (let i = 0; i < 40; i++) {
      messages.push({
        role: "assistant",
        content: [
          { type: "text", text: `reading report ${i}` },
          {
            type: "tool_use",
            id: `t${i}`,
            name: "file_read",
            input: { attachment_id: "att_X", lines: `${i * 500 + 1}-${i * 500 + 500}` },
          },
        ],
      });
      const content =
        i === 7
          ? [
              { type: "text", text: "screenshot" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "A".repeat(200_000) } },
            ]
          : `report ${i}\n${`amount ${i * 17}.00 EUR; `.repeat(1_300)}`;
      messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content }] });
    }
    const budget = {
      contextWindowTokens: 200_000,
      outputReserveTokens: 8_192,
      compactTriggerRatio: 0.75,
      compactTargetRatio: 0.5,
      charsPerToken: 1.5,
    };
    const turnChars = JSON.stringify(messages).length;
    const origin = () => ({ conversationId: "conv_X", messageId: "msg_X", block: 0 });
    const runs = [];
    let report;
    for (let r = 0; r < 20; r++) {
      const t0 = performance.now();
      report = compactMessages(messages, { fixedChars: 5_000, budget, originOf: origin }).report;
      runs.push(performance.now() - t0);
    }
    runs.sort((a, b) => a - b);
    console.log(
      `turn: ${(turnChars / 1024 / 1024).toFixed(2)} MB (40 tool results, one with a 200 KB screenshot); trigger due: ${shouldCompact(report.tokensBefore, budget)}`,
    );
    console.log(
      `deterministic pass: median ${runs[10].toFixed(1)} ms, max ${runs[19].toFixed(1)} ms over 20 runs (Node, no model call)`,
    );
    console.log(
      `tokens (at 1.5 chars/token): ${report.tokensBefore.toLocaleString("en-US")} -> ${report.tokensAfter.toLocaleString("en-US")}, saved ${report.tokensSaved.toLocaleString("en-US")} (${report.targets.length} targets)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
