// bench:scale, the cron part — the automation tick's work per invocation as tenants grow. N
// tenants with one hourly automation each are seeded into the local D1 (wrangler's local state,
// before the stack starts); the real stack's cron handler is then fired at chosen times and each
// invocation's own report (the `automation_claims` log line: rows read, D1 statements, ms) is read
// from the stack's output. Two shapes per N, each on its own stack: staggered schedules (minute =
// tenant % 60, so the tick at :05 finds about N/10 due) followed by an idle tick, and a burst
// (every automation due in the same minute, which the tick pages through claim continuations on
// the automation queue). BENCH_TENANTS=100,1000 sets the tenant counts.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations, DATABASE, ROOT, startStack, WRANGLER } from "../stack.mjs";

const TENANT_COUNTS = (process.env.BENCH_TENANTS ?? "100,1000").split(",").map(Number);
// A fixed hour, so the figures repeat run to run.
const HOUR = Date.parse("2030-01-07T10:00:00Z");
const iso = (ms) => new Date(ms).toISOString();

/** SQL for `n` tenants, each with one automation on `schedule(i)` whose next slot is `next(i)`. */
function seedSql(prefix, n, schedule, next) {
  const now = iso(HOUR - 3600_000);
  const lines = [];
  for (let i = 0; i < n; i++) {
    const id = `${prefix}${String(i).padStart(6, "0")}`;
    lines.push(`INSERT INTO tenants (id, name, created_at) VALUES ('ten_${id}', 'bench ${id}', '${now}');`);
    lines.push(
      `INSERT INTO automations (id, tenant_id, name, schedule, prompt, channel, paused, created_at, updated_at, next_run_at) VALUES ('auto_${id}', 'ten_${id}', 'check-in', '${schedule(i)}', 'hourly check-in', 'bench', 0, '${now}', '${now}', '${next(i)}');`,
    );
  }
  return lines.join("\n");
}

function seed(persistTo, sql) {
  const file = join(persistTo, "seed.sql");
  writeFileSync(file, sql);
  const res = spawnSync(WRANGLER, ["d1", "execute", DATABASE, "--local", "--persist-to", persistTo, "--file", file], {
    cwd: ROOT,
    env: { ...process.env, CI: "true" },
    encoding: "utf8",
  });
  if (res.status !== 0) throw new Error(`seeding failed: ${res.stderr || res.stdout}`);
}

/** Fires the cron at `at` and collects the claim reports of that tick (the first invocation and its continuations). */
async function tick(stack, at, expectClaims) {
  const seen = stack.output().length;
  const res = await fetch(
    `${stack.baseUrl}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("*/5 * * * *")}&time=${at}`,
  );
  await res.text();
  const deadline = Date.now() + 600_000;
  for (;;) {
    const reports = [
      ...stack
        .output()
        .slice(seen)
        .matchAll(/\{"event":"automation_claims".*?\}/g),
    ]
      .map((m) => JSON.parse(m[0]))
      .filter((r) => r.tick === iso(at));
    const claimed = reports.reduce((n, r) => n + r.claimed, 0);
    if ((reports.length && !reports[reports.length - 1].continued && claimed >= expectClaims) || Date.now() > deadline)
      return reports;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function line(label, n, reports) {
  const max = (k) => Math.max(...reports.map((r) => r[k]));
  const sum = (k) => reports.reduce((s, r) => s + r[k], 0);
  const ms = reports.map((r) => r.ms).sort((a, b) => a - b);
  return `${label.padEnd(10)} ${String(n).padStart(6)} tenants: ${String(sum("claimed")).padStart(5)} claimed in ${String(reports.length).padStart(3)} invocation(s); per invocation max ${String(max("rowsRead")).padStart(4)} rows read, ${String(max("statements")).padStart(4)} statements, ${ms[ms.length - 1]} ms (median ${ms[Math.floor(ms.length / 2)]} ms)`;
}

/** A throwaway stack seeded with `sql` (wrangler's local D1, before the stack starts). */
async function withSeededStack(sql, fn) {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-scale-"));
  try {
    applyMigrations({ persistTo: dir });
    seed(dir, sql);
    // Turns of claimed runs answer at once (no model configured) and retry only after the bench.
    const stack = await startStack({
      persistTo: dir,
      vars: {
        RATE_LIMIT_PER_MINUTE: "0",
        TURN_RATE_LIMIT_PER_MINUTE: "0",
        MODEL_PROVIDER: "anthropic",
        AUTOMATION_RETRY_DELAY_SECONDS: "3600",
      },
    });
    try {
      return await fn(stack);
    } finally {
      await stack.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchScaleCron() {
  console.log(
    "cron tick work per invocation (page: 100 due automations; figures from each invocation's automation_claims report)",
  );
  console.log(
    "before paging, a tick read every automation of every tenant: N rows in ceil(N/200) queries, all in one invocation\n",
  );
  for (const n of TENANT_COUNTS) {
    // Staggered: tenant i runs at minute i % 60; every row's next slot is in the measured hour.
    const minute = (i) => i % 60;
    await withSeededStack(
      seedSql(
        "s",
        n,
        (i) => `${minute(i)} * * * *`,
        (i) => iso(HOUR + minute(i) * 60_000),
      ),
      async (stack) => {
        const due = Array.from({ length: n }, (_, i) => minute(i)).filter((m) => m <= 5).length;
        console.log(line("staggered", n, await tick(stack, HOUR + 5 * 60_000 + 1000, due)));
        console.log(line("idle", n, await tick(stack, HOUR + 5 * 60_000 + 30_000, 0)));
      },
    );
    // Burst: every tenant's automation due in the same minute.
    await withSeededStack(
      seedSql(
        "b",
        n,
        () => "0 * * * *",
        () => iso(HOUR),
      ),
      async (stack) => {
        const t0 = Date.now();
        const reports = await tick(stack, HOUR + 60_000, n);
        console.log(
          `${line("burst", n, reports)}; all claimed ${((Date.now() - t0) / 1000).toFixed(1)} s after the tick`,
        );
      },
    );
  }
}
