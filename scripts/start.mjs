// `npm start`: the whole platform locally — D1 migrations applied to .wrangler/state, the dev
// tenant bootstrapped on first request, both workers served by one `wrangler dev` on :8787.
import { spawn } from "node:child_process";
import { ROOT, applyMigrations, wranglerDevArgs } from "./stack.mjs";

const port = Number(process.env.PORT ?? 8787);
applyMigrations({ stdio: "inherit" });
const child = spawn(`${ROOT}node_modules/.bin/wrangler`, wranglerDevArgs({ port }), { cwd: ROOT, stdio: "inherit" });
const forward = (signal) => () => child.kill(signal);
process.on("SIGINT", forward("SIGINT"));
process.on("SIGTERM", forward("SIGTERM"));
child.on("exit", (code) => process.exit(code ?? 0));
