// bench:recall — two measurements on the offline model (its prompt-cache accounting follows
// Anthropic's rules: breakpoints, 5-minute lifetime, minimum cacheable length):
//  1. stub batching: the same scripted conversation under several stubBatchChars settings; per
//     setting the request-level and token-weighted cache hit rates, the replay size, and a cost
//     index in input-token units at Anthropic's multipliers (cache write 1.25x, cache read 0.1x).
//  2. recall@5: definite references into folded and stubbed content, searched as the model searches:
//     memory_search calls in a turn (the offline model's @tool directive), each hit then recovered
//     through the very call the tool result names.
import { get, post, withStack } from "./common.mjs";

const BATCHES = [0, 4_000, 8_000, 16_000, 32_000, 64_000];
const TURNS = Number(process.env.RECALL_TURNS ?? 120);

/** A workday: questions, a file read every 4th turn (5-12K chars of output), small talk between. */
function scripted(i, lastAssistant) {
  if (i % 4 === 1 && lastAssistant)
    return `check the earlier answer\n@tool conversation_read {"message_id":"${lastAssistant}"}\n@reply-chars 300`;
  return `Question ${i}: what about item ${i} of the plan?\n@reply-chars ${i % 4 === 0 ? 5000 + ((i * 911) % 7000) : 400}`;
}

async function runConversation(base, settings) {
  const id = (await post(base, "/v1/conversations", { title: "cache", settings })).json.id;
  let lastBig = null;
  const totals = { requests: 0, hits: 0, input: 0, read: 0, write: 0, replayChars: 0 };
  for (let i = 0; i < TURNS; i++) {
    const { json } = await post(base, `/v1/conversations/${id}/messages`, { content: scripted(i, lastBig) });
    const assistants = json.messages.filter((m) => m.role === "assistant");
    if (i % 4 === 0) lastBig = assistants.at(-1).id;
    for (const m of assistants) {
      const u = m.usage;
      totals.requests++;
      if (u.cache_read_input_tokens > 0) totals.hits++;
      totals.input += u.input_tokens;
      totals.read += u.cache_read_input_tokens;
      totals.write += u.cache_creation_input_tokens;
    }
    totals.replayChars += (await get(base, `/v1/conversations/${id}/replay`)).estimate.messageChars;
  }
  const all = totals.input + totals.read + totals.write;
  return {
    requestHit: totals.hits / totals.requests,
    tokenHit: totals.read / all,
    promptTokens: all,
    cost: totals.input + 1.25 * totals.write + 0.1 * totals.read,
    meanReplay: totals.replayChars / TURNS,
  };
}

async function stubBatching(base) {
  console.log(`stub batching: ${TURNS} turns per setting, file reads every 4th turn, folding off (to isolate stubs)`);
  const configs = [
    { label: "no stubs", settings: { stubMinChars: 10_000_000 } },
    ...BATCHES.map((b) => ({ label: `batch ${b}`, settings: { stubBatchChars: b } })),
  ];
  const rows = await Promise.all(
    configs.map(async (c) => ({
      ...c,
      ...(await runConversation(base, { foldThresholdChars: 50_000_000, ...c.settings })),
    })),
  );
  const base0 = rows[0];
  console.log("setting         request hits  token hits  prompt tokens  mean replay chars  cost index (vs no stubs)");
  for (const r of rows) {
    console.log(
      `${r.label.padEnd(15)} ${(100 * r.requestHit).toFixed(1).padStart(11)}% ${(100 * r.tokenHit).toFixed(1).padStart(10)}% ${String(r.promptTokens).padStart(14)} ${r.meanReplay.toFixed(0).padStart(18)} ${r.cost.toFixed(0).padStart(12)} (${((100 * r.cost) / base0.cost).toFixed(1)}%)`,
    );
  }
  const best = rows.slice(1).reduce((a, r) => (r.cost < a.cost ? r : a));
  console.log(`cheapest setting: ${best.label}`);
}

/** Definite references: each fact is planted once, then either folded away or stubbed. */
const FOLDED = [
  {
    text: "The flight plan for the Oslo trip: depart 07:40 from gate B12 on flight SK4411.",
    queries: ["the flight plan for Oslo", "which gate for the Oslo departure", "SK4411"],
  },
  {
    text: "Invoice INV-88231 from Nordlys AS totals 4,210 EUR and is due on 2027-01-15.",
    queries: ["that invoice from Nordlys", "INV-88231", "when is the Nordlys invoice due"],
  },
  {
    text: "We decided to migrate the billing database to Postgres 17 in March.",
    queries: ["the billing database migration decision", "which Postgres version did we pick"],
  },
];
const STUBBED = [
  {
    text: "The forecast lives in quarterly-forecast-v3.xlsx on the finance share; revenue line 14 shows 1,382,000.",
    queries: ["quarterly-forecast-v3.xlsx", "where is the quarterly forecast file", "revenue line 14"],
  },
  {
    text: "My daughter's piano recital is on Saturday at the Grieghallen, row F seat 14.",
    queries: ["the piano recital seats", "Grieghallen"],
  },
  {
    text: "The staging cluster's kubeconfig is stage-eu-west-2.yaml and the on-call rota starts with Priya.",
    queries: ["that kubeconfig for staging", "who starts the on-call rota"],
  },
];
const PADDING = ` Background notes follow for context.${" The team discussed schedules, budgets and logistics at length without deciding anything new.".repeat(30)}`;

/** Plants each fact as a long message read back by a tool; returns the ids holding it. */
async function plant(base, id, facts) {
  const targets = [];
  for (const f of facts) {
    const r = await post(base, `/v1/conversations/${id}/messages`, { content: f.text + PADDING });
    const read = await post(base, `/v1/conversations/${id}/messages`, {
      content: `@tool conversation_read {"message_id":"${r.json.messages[0].id}"}`,
    });
    targets.push([r.json.messages[0].id, read.json.messages[2].id]);
  }
  return targets;
}

/** The tool results of a turn, keyed by the input of the call that produced them. */
function resultsByCall(messages) {
  const calls = new Map();
  for (const m of messages) for (const b of m.content) if (b.type === "tool_use") calls.set(b.id, b);
  const out = [];
  for (const m of messages)
    for (const b of m.content)
      if (b.type === "tool_result")
        out.push({
          call: calls.get(b.tool_use_id),
          text: typeof b.content === "string" ? b.content : b.content.map((x) => x.text ?? "").join(""),
        });
  return out;
}

/** The hits of a memory_search result in rank order, each with the call it names. */
function hitsOf(text) {
  return [...text.matchAll(/^\d+\. .*\n\s+full text: (\w+) (\{.*\})$/gm)].map((m) => ({
    tool: m[1],
    input: JSON.parse(m[2]),
  }));
}

/**
 * One turn of a probe conversation asks every query with memory_search (all calls in one step,
 * so no earlier probe turn can pollute the ranking), as the model would; then one turn makes the
 * call each target hit names and checks that it returns the planted fact.
 */
async function score(base, sets) {
  const probe = (await post(base, "/v1/conversations", { title: "recall probe" })).json.id;
  const asks = sets.flatMap(({ label, facts, targets }) =>
    facts.flatMap((f, k) => f.queries.map((q) => ({ label, fact: f, targets: targets[k], q }))),
  );
  // The probe's own prompt (holding every query) is indexed while its turn runs and matches every
  // query; a model skips its own question, so hits in the probe conversation are dropped and one
  // more is asked for, keeping five real candidates.
  const lines = asks.map((a) => `@tool memory_search ${JSON.stringify({ query: a.q, limit: 6 })}`);
  const searched = resultsByCall(
    (await post(base, `/v1/conversations/${probe}/messages`, { content: `recall these\n${lines.join("\n")}` })).json
      .messages,
  );
  const found = asks.map((a) => {
    const result = searched.find((r) => r.call?.name === "memory_search" && r.call.input.query === a.q);
    const hits = (result ? hitsOf(result.text) : []).filter((h) => h.input.conversation_id !== probe).slice(0, 5);
    const rank = hits.findIndex((h) => h.tool === "conversation_read" && a.targets.includes(h.input.message_id));
    return { ...a, rank, named: rank >= 0 ? hits[rank] : null };
  });
  const follow = found.filter((f) => f.named);
  const reads = follow.length
    ? resultsByCall(
        (
          await post(base, `/v1/conversations/${probe}/messages`, {
            content: `read them\n${follow.map((f) => `@tool ${f.named.tool} ${JSON.stringify(f.named.input)}`).join("\n")}`,
          })
        ).json.messages,
      )
    : [];
  const totals = {};
  for (const f of found) {
    const read = f.named
      ? reads.find(
          (r) => r.call?.name === f.named.tool && JSON.stringify(r.call.input) === JSON.stringify(f.named.input),
        )
      : null;
    const recovered = !!read && read.text.includes(f.fact.text.slice(0, 60));
    const t = (totals[f.label] ??= { hits: 0, recovered: 0, total: 0 });
    t.total++;
    if (f.rank >= 0) t.hits++;
    if (recovered) t.recovered++;
    console.log(
      `  ${f.label}: ${f.rank >= 0 ? `hit @${f.rank + 1}${recovered ? ", recovered by the named call" : ", NOT recovered by the named call"}` : "miss"}  "${f.q}"`,
    );
  }
  return totals;
}

async function recallAt5(base) {
  // Folded: a low threshold, then chatter until the facts are behind the fold boundary.
  const folded = (
    await post(base, "/v1/conversations", { title: "recall folded", settings: { foldThresholdChars: 8_000 } })
  ).json.id;
  const foldedTargets = await plant(base, folded, FOLDED);
  for (let i = 0; i < 30; i++)
    await post(base, `/v1/conversations/${folded}/messages`, {
      content: `unrelated chatter ${i} about the weather and lunch\n@reply-chars 600`,
    });
  for (let i = 0; i < 100 && (await get(base, `/v1/conversations/${folded}`)).foldInFlight; i++)
    await new Promise((r) => setTimeout(r, 100));
  const fm = await get(base, `/v1/conversations/${folded}`);
  // Stubbed: folding off, a few exchanges later every read-back result replays as a stub.
  const stubbed = (
    await post(base, "/v1/conversations", {
      title: "recall stubbed",
      settings: { foldThresholdChars: 50_000_000, stubBatchChars: 0 },
    })
  ).json.id;
  const stubTargets = await plant(base, stubbed, STUBBED);
  for (let i = 0; i < 3; i++) await post(base, `/v1/conversations/${stubbed}/messages`, { content: `small talk ${i}` });
  const sr = await get(base, `/v1/conversations/${stubbed}/replay`);
  console.log(`\nrecall@5 through the model's memory_search tool, each hit followed with the call it names`);
  console.log(
    `  folded set: ${fm.foldCount} folds, messages 1-${fm.summarizedThroughMessage} folded; stubbed set: ${sr.estimate.stubbedResults} read-back results replayed as stubs`,
  );
  const totals = await score(base, [
    { label: "folded ", facts: FOLDED, targets: foldedTargets },
    { label: "stubbed", facts: STUBBED, targets: stubTargets },
  ]);
  const a = totals["folded "];
  const b = totals.stubbed;
  console.log(
    `recall@5: folded ${a.hits}/${a.total}, stubbed ${b.hits}/${b.total}, all ${a.hits + b.hits}/${a.total + b.total} = ${((100 * (a.hits + b.hits)) / (a.total + b.total)).toFixed(0)}%`,
  );
  console.log(`recovered through the named call: ${a.recovered + b.recovered} of ${a.hits + b.hits} hits`);
}

export async function benchRecall() {
  await withStack(async (base) => {
    await stubBatching(base);
    await recallAt5(base);
  });
}
