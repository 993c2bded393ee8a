// `npm run bench <name>`: benchmarks against the real local stack (loopback only, bounded).
//   turn      server-side time per turn (model time excluded) at conversation ages of 10, 1,000 and
//             5,000 messages, measured interleaved in one run, and the ratio 5,000/10 (folding on).
//   sawtooth  a scripted 2,000-turn conversation with tool use: replay size per turn (CSV + SVG),
//             fold calls, the largest replay, and the final replay against a naive full replay.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, startStack } from "./stack.mjs";
import { sawtoothSvg } from "./sawtooth-svg.mjs";

const AUTH = { authorization: "Bearer dev-local-key", "content-type": "application/json" };

async function get(base, path) {
  const res = await fetch(base + path, { headers: AUTH });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  return json;
}

async function post(base, path, body) {
  const res = await fetch(base + path, { method: "POST", headers: AUTH, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  return { json, timing: res.headers.get("server-timing") ?? "" };
}

const dur = (timing, name) => Number(new RegExp(`${name};dur=(\\d+(?:\\.\\d+)?)`).exec(timing)?.[1] ?? NaN);
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function fill(base, id, messages) {
  // Each turn adds 2 messages (user + reply).
  for (let i = 0; i < messages / 2; i++) await post(base, `/v1/conversations/${id}/messages`, { content: `fill turn ${i}: a short note about item ${i}` });
}

const FOLD_THRESHOLD = 20_000;

async function benchTurn() {
  const ages = [10, 1000, 5000];
  const rounds = Number(process.env.BENCH_ROUNDS ?? 40);
  const dir = mkdtempSync(join(tmpdir(), "context-chat-bench-"));
  const stack = await startStack({ persistTo: dir });
  try {
    const base = stack.baseUrl;
    const convs = {};
    const t0 = Date.now();
    await Promise.all(
      ages.map(async (age) => {
        // A low fold threshold so the old conversations fold many times while they fill.
        convs[age] = (await post(base, "/v1/conversations", { title: `age ${age}`, settings: { foldThresholdChars: FOLD_THRESHOLD } })).json.id;
        await fill(base, convs[age], age);
      }),
    );
    console.log(`filled conversations to ${ages.join(", ")} messages in ${((Date.now() - t0) / 1000).toFixed(1)} s (fold threshold ${FOLD_THRESHOLD} chars)`);
    const samples = Object.fromEntries(ages.map((a) => [a, { app: [], model: [] }]));
    for (let r = 0; r < rounds; r++) {
      // Interleaved: every round measures each age once, so machine noise hits all ages alike.
      for (const age of ages) {
        const { timing } = await post(base, `/v1/conversations/${convs[age]}/messages`, { content: `measure ${r}` });
        samples[age].app.push(dur(timing, "app"));
        samples[age].model.push(dur(timing, "model"));
      }
    }
    console.log(`\nserver-side time per turn, model time excluded (${rounds} turns per age, interleaved)`);
    console.log("age (messages)   p50 ms   p90 ms   mean ms   model p50 ms");
    const p50 = {};
    for (const age of ages) {
      const app = samples[age].app;
      p50[age] = quantile(app, 0.5);
      const mean = app.reduce((a, b) => a + b, 0) / app.length;
      console.log(`${String(age).padStart(14)} ${p50[age].toFixed(1).padStart(8)} ${quantile(app, 0.9).toFixed(1).padStart(8)} ${mean.toFixed(1).padStart(9)} ${quantile(samples[age].model, 0.5).toFixed(1).padStart(14)}`);
    }
    const ratio = p50[5000] / p50[10];
    console.log(`\nratio p50(5,000) / p50(10) = ${ratio.toFixed(2)} (target <= 1.3)`);
    for (const age of ages) {
      const m = await get(base, `/v1/conversations/${convs[age]}`);
      const replay = await get(base, `/v1/conversations/${convs[age]}/replay`);
      console.log(`age ${age}: ${m.messageCount} messages, ${m.foldCount} folds, replay ${replay.messages.length} messages / ${replay.estimate.messageChars} chars`);
    }
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The scripted user of the sawtooth: turn sizes vary, every 5th turn reads back, every 7th searches. */
function scriptedTurn(i, lastSeq) {
  const reply = 500 + ((i * 373) % 1500);
  const lines = [`Turn ${i}: review record R-${i} for project ${["apollo", "borealis", "cygnus", "draco"][i % 4]} and note what changed since turn ${Math.max(0, i - 3)}.`];
  if (i % 5 === 4 && lastSeq > 20) lines.push(`@tool conversation_read {"from_seq":${lastSeq - 19},"to_seq":${lastSeq - 14}}`);
  else if (i % 7 === 6) lines.push(`@tool memory_search {"query":"record R-${Math.max(0, i - 50)}"}`);
  lines.push(`@reply-chars ${reply}`);
  return lines.join("\n");
}

async function benchSawtooth() {
  const turns = Number(process.env.SAWTOOTH_TURNS ?? 2000);
  const dir = mkdtempSync(join(tmpdir(), "context-chat-sawtooth-"));
  const stack = await startStack({ persistTo: dir });
  const out = join(ROOT, "bench-results");
  mkdirSync(out, { recursive: true });
  try {
    const base = stack.baseUrl;
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
      rows.push({ turn: i + 1, messages: meta.messageCount, replay: replay.estimate.messageChars, naive: naiveMessages, folds: meta.foldCount, tailMessages: replay.messages.length - (meta.summary ? 2 : 0) });
      if ((i + 1) % 250 === 0) console.log(`turn ${i + 1}: replay ${replay.estimate.messageChars} chars, naive ${naiveMessages}, folds ${meta.foldCount}`);
    }
    const elapsed = (Date.now() - t0) / 1000;
    const last = rows[rows.length - 1];
    const largest = rows.reduce((a, r) => (r.replay > a.replay ? r : a));
    // The tail a fold keeps: the replay right after each fold, less the summary preamble.
    const afterFold = rows.filter((r, k) => k > 0 && r.folds > rows[k - 1].folds).map((r) => r.replay);
    const largestAfterFold = afterFold.length ? Math.max(...afterFold) : 0;
    const bound = threshold + summaryMax + largestAfterFold;
    const foldBound = Math.ceil(last.naive / threshold) + 1;
    writeFileSync(join(out, "sawtooth.csv"), ["turn,messages,replay_chars,naive_chars,folds", ...rows.map((r) => `${r.turn},${r.messages},${r.replay},${r.naive},${r.folds}`)].join("\n") + "\n");
    writeFileSync(join(out, "sawtooth.svg"), sawtoothSvg(rows, threshold));
    console.log(`\n${turns} turns in ${elapsed.toFixed(0)} s (the scripted user waited ${(waitedMs / 1000).toFixed(1)} s in all for folds in flight)`);
    console.log(`prefix (system + tools): ${first.estimate.prefixChars} chars, the same on every request`);
    console.log(`fold calls: ${last.folds} (target <= ceil(${last.naive} / ${threshold}) + 1 = ${foldBound}) ${last.folds <= foldBound ? "MET" : "MISSED"}`);
    console.log(`largest replay: ${largest.replay} chars at turn ${largest.turn} (target <= threshold ${threshold} + summary ${summaryMax} + largest kept tail ${largestAfterFold} = ${bound}) ${largest.replay <= bound ? "MET" : "MISSED"}`);
    console.log(`replay at turn ${last.turn}: ${last.replay} chars vs naive ${last.naive} = ${((100 * last.replay) / last.naive).toFixed(2)}% (target <= 5%) ${last.replay <= last.naive * 0.05 ? "MET" : "MISSED"}`);
    console.log(`wrote ${join(out, "sawtooth.csv")} and ${join(out, "sawtooth.svg")}`);
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Replay chars of one stored message, counted as the server counts them (core/render.messageChars). */
function messageChars(m) {
  let n = 0;
  for (const b of m.content) {
    if (b.type === "text") n += b.text.length;
    else if (b.type === "tool_use") n += b.name.length + JSON.stringify(b.input).length;
    else if (b.type === "tool_result") n += typeof b.content === "string" ? b.content.length : b.content.map((x) => (x.type === "text" ? x.text : "")).join("\n").length;
  }
  return n;
}

const benches = { turn: benchTurn, sawtooth: benchSawtooth };
const name = process.argv[2];
if (!benches[name]) {
  console.log(`usage: npm run bench -- <${Object.keys(benches).join("|")}>`);
  process.exit(2);
}
await benches[name]();
