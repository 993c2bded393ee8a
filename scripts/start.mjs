// `npm start`: the whole platform locally — D1 migrations applied to .wrangler/state, the dev
// tenant bootstrapped on first request, both workers served by one `wrangler dev` on :8787.
import { spawn } from "node:child_process";
import { ROOT, applyMigrations, wranglerDevArgs, writeSummarizerDevVars } from "./stack.mjs";

const port = Number(process.env.PORT ?? 8787);

writeSummarizerDevVars();
applyMigrations({ stdio: "inherit" });
const child = spawn(`${ROOT}node_modules/.bin/wrangler`, wranglerDevArgs({ port }), { cwd: ROOT, stdio: "inherit" });
// wrangler dev does not fire cron triggers by itself; this does, through wrangler's own
// scheduled-handler endpoint, on the schedule wrangler.toml declares (every 5 minutes), so
// automations run locally as they do deployed.
const CRON = "*/5 * * * *";
let lastTick = Math.floor(Date.now() / 300_000);
const ticker = setInterval(() => {
  const slot = Math.floor(Date.now() / 300_000);
  if (slot === lastTick) return;
  lastTick = slot;
  fetch(`http://127.0.0.1:${port}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent(CRON)}`).catch(() => {});
}, 10_000);
ticker.unref();

const forward = (signal) => () => child.kill(signal);
process.on("SIGINT", forward("SIGINT"));
process.on("SIGTERM", forward("SIGTERM"));
child.on("exit", (code) => process.exit(code ?? 0));
