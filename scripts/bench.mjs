// `npm run bench <name>`: benchmarks against the real local stack (loopback only, bounded).
//   turn   server-side time per turn (model time excluded) at conversation ages of 10, 1,000 and
//          5,000 messages, measured interleaved in one run, and the ratio 5,000/10.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStack } from "./stack.mjs";

const AUTH = { authorization: "Bearer dev-local-key", "content-type": "application/json" };

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
  // Each turn adds 2 messages (user + reply). Short texts keep 5,000 messages inside the model window.
  for (let i = 0; i < messages / 2; i++) await post(base, `/v1/conversations/${id}/messages`, { content: `fill ${i}` });
}

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
        convs[age] = (await post(base, "/v1/conversations", { title: `age ${age}` })).json.id;
        await fill(base, convs[age], age);
      }),
    );
    console.log(`filled conversations to ${ages.join(", ")} messages in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
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
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const benches = { turn: benchTurn };
const name = process.argv[2];
if (!benches[name]) {
  console.log(`usage: npm run bench -- <${Object.keys(benches).join("|")}>`);
  process.exit(2);
}
await benches[name]();
