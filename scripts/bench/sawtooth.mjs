// bench:sawtooth — a scripted 2,000-turn conversation with tool use on the offline model: the
// replay size per turn (CSV + SVG), fold calls, the largest replay, the final replay vs naive.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../stack.mjs";
import { sawtoothSvg } from "./sawtooth-svg.mjs";
import { get, messageChars, post, withStack } from "./common.mjs";

/** The scripted user of the sawtooth: turn sizes vary, every 5th turn reads back, every 7th searches. */
function scriptedTurn(i, lastSeq) {
  const reply = 500 + ((i * 373) % 1500);
  const lines = [
    `Turn ${i}: review record R-${i} for project ${["apollo", "borealis", "cygnus", "draco"][i % 4]} and note what changed since turn ${Math.max(0, i - 3)}.`,
  ];
  if (i % 5 === 4 && lastSeq > 20)
    lines.push(`@tool conversation_read {"from_seq":${lastSeq - 19},"to_seq":${lastSeq - 14}}`);
  else if (i % 7 === 6) lines.push(`@tool memory_search {"query":"record R-${Math.max(0, i - 50)}"}`);
  lines.push(`@reply-chars ${reply}`);
  return lines.join("\n");
}

export async function benchSawtooth() {
  const turns = Number(process.env.SAWTOOTH_TURNS ?? 2000);
  const out = join(ROOT, "bench-results");
  mkdirSync(out, { recursive: true });
  await withStack(async (base) => {
    const created = (await post(base, "/v1/conversations", { title: "sawtooth" })).json;
    const id = created.id;
    const threshold = created.settings.foldThresholdChars;
    const summaryMax = created.settings.summaryMaxChars;
    const first = await get(base, `/v1/conversations/${id}/replay`);
    let naiveMessages = 0;
    let lastSeq = 0;
    let waitedMs = 0;
    const rows = [];
    const t0 = Date.now();
    for (let i = 0; i < turns; i++) {
      const { json } = await post(base, `/v1/conversations/${id}/messages`, { content: scriptedTurn(i, lastSeq) });
      for (const m of json.messages) naiveMessages += messageChars(m);
      lastSeq = json.messages[json.messages.length - 1].seq;
      // A person reads the answer before typing again: the scripted user waits while a fold is in
      // flight, as the seconds of a real model call would. The turn itself never waits for a fold.
      let meta = await get(base, `/v1/conversations/${id}`);
      const w0 = Date.now();
      while (meta.foldInFlight && Date.now() - w0 < 30_000) {
        await new Promise((r) => setTimeout(r, 50));
        meta = await get(base, `/v1/conversations/${id}`);
      }
      waitedMs += Date.now() - w0;
      const replay = await get(base, `/v1/conversations/${id}/replay`);
      // Once folded, the replay opens with the summary preamble and its acknowledgement.
      const preamble = meta.summarizedThroughMessage
        ? messageChars(replay.messages[0]) + messageChars(replay.messages[1])
        : 0;
      rows.push({
        turn: i + 1,
        messages: meta.messageCount,
        replay: replay.estimate.messageChars,
        preamble,
        naive: naiveMessages,
        folds: meta.foldCount,
        stubSaved: replay.estimate.stubSavedChars,
        stubs: replay.estimate.stubbedResults,
      });
      if ((i + 1) % 250 === 0)
        console.log(
          `turn ${i + 1}: replay ${replay.estimate.messageChars} chars, naive ${naiveMessages}, folds ${meta.foldCount}`,
        );
    }
    const elapsed = (Date.now() - t0) / 1000;
    const last = rows[rows.length - 1];
    const largest = rows.reduce((a, r) => (r.replay > a.replay ? r : a));
    // The replay is at most: what a fold would fold but has not yet (the threshold), the summary
    // preamble and acknowledgement, and the tail a fold keeps. Each is measured apart: the tail is
    // the replay right after each fold less its preamble, so the summary is counted once.
    const afterFold = rows.filter((r, k) => k > 0 && r.folds > rows[k - 1].folds).map((r) => r.replay - r.preamble);
    const largestAfterFold = afterFold.length ? Math.max(...afterFold) : 0;
    const largestPreamble = Math.max(0, ...rows.map((r) => r.preamble));
    const bound = threshold + largestPreamble + largestAfterFold;
    const foldBound = Math.ceil(last.naive / threshold) + 1;
    writeFileSync(
      join(out, "sawtooth.csv"),
      `${["turn,messages,replay_chars,naive_chars,folds,stubbed_results,stub_saved_chars", ...rows.map((r) => `${r.turn},${r.messages},${r.replay},${r.naive},${r.folds},${r.stubs},${r.stubSaved}`)].join("\n")}\n`,
    );
    writeFileSync(join(out, "sawtooth.svg"), sawtoothSvg(rows, threshold));
    console.log(
      `\n${turns} turns in ${elapsed.toFixed(0)} s (the scripted user waited ${(waitedMs / 1000).toFixed(1)} s in all for folds in flight)`,
    );
    console.log(`prefix (system + tools): ${first.estimate.prefixChars} chars, the same on every request`);
    console.log(
      `fold calls: ${last.folds} (target <= ceil(${last.naive} / ${threshold}) + 1 = ${foldBound}) ${last.folds <= foldBound ? "MET" : "MISSED"}`,
    );
    console.log(
      `largest replay: ${largest.replay} chars at turn ${largest.turn} (target <= threshold ${threshold} + largest summary preamble ${largestPreamble} (summary cap ${summaryMax} + framing) + largest kept tail ${largestAfterFold} = ${bound}) ${largest.replay <= bound ? "MET" : "MISSED"}`,
    );
    console.log(
      `replay at turn ${last.turn}: ${last.replay} chars vs naive ${last.naive} = ${((100 * last.replay) / last.naive).toFixed(2)}% (target <= 5%) ${last.replay <= last.naive * 0.05 ? "MET" : "MISSED"}`,
    );
    const meanSaved = rows.reduce((a, r) => a + r.stubSaved, 0) / rows.length;
    const meanReplay = rows.reduce((a, r) => a + r.replay, 0) / rows.length;
    console.log(
      `stubs: on average ${meanSaved.toFixed(0)} chars per request replaced by stubs (the replay would be ${((100 * meanSaved) / meanReplay).toFixed(1)}% larger without them); ${last.stubs} results stubbed at turn ${last.turn}`,
    );
    console.log(`wrote ${join(out, "sawtooth.csv")} and ${join(out, "sawtooth.svg")}`);
  });
}
