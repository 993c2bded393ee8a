// bench:turn — server-side time per turn (model time excluded, from Server-Timing) at
// conversation ages of 10, 1,000 and 5,000 messages, measured interleaved in one run.
import { dur, get, post, quantile, withStack } from "./common.mjs";

async function fill(base, id, messages) {
  // Each turn adds 2 messages (user + reply).
  for (let i = 0; i < messages / 2; i++)
    await post(base, `/v1/conversations/${id}/messages`, { content: `fill turn ${i}: a short note about item ${i}` });
}

const FOLD_THRESHOLD = 20_000;

export async function benchTurn() {
  const ages = [10, 1000, 5000];
  const rounds = Number(process.env.BENCH_ROUNDS ?? 40);
  await withStack(async (base) => {
    const convs = {};
    const t0 = Date.now();
    await Promise.all(
      ages.map(async (age) => {
        // A low fold threshold so the old conversations fold many times while they fill.
        convs[age] = (
          await post(base, "/v1/conversations", {
            title: `age ${age}`,
            settings: { foldThresholdChars: FOLD_THRESHOLD },
          })
        ).json.id;
        await fill(base, convs[age], age);
      }),
    );
    console.log(
      `filled conversations to ${ages.join(", ")} messages in ${((Date.now() - t0) / 1000).toFixed(1)} s (fold threshold ${FOLD_THRESHOLD} chars)`,
    );
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
      console.log(
        `${String(age).padStart(14)} ${p50[age].toFixed(1).padStart(8)} ${quantile(app, 0.9).toFixed(1).padStart(8)} ${mean.toFixed(1).padStart(9)} ${quantile(samples[age].model, 0.5).toFixed(1).padStart(14)}`,
      );
    }
    const ratio = p50[5000] / p50[10];
    console.log(`\nratio p50(5,000) / p50(10) = ${ratio.toFixed(2)} (target <= 1.3)`);
    for (const age of ages) {
      const m = await get(base, `/v1/conversations/${convs[age]}`);
      const replay = await get(base, `/v1/conversations/${convs[age]}/replay`);
      console.log(
        `age ${age}: ${m.messageCount} messages, ${m.foldCount} folds, replay ${replay.messages.length} messages / ${replay.estimate.messageChars} chars`,
      );
    }
  });
}
