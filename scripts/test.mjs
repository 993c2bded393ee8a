// `npm test`'s runner (after the lint): the end-to-end project in a vitest of its own, beside the
// other projects' vitest rather than after it. The end-to-end files run one at a time against the
// local stack and leave most of the machine idle (about 45% of 2 cores over their 320 s in a
// clean-clone run), while the workers project alone left 31% idle with two files at once; so each
// side gets the cores' count of files at once (TEST_MAX_WORKERS) and fills the other's gaps.
// The others' output is shown as it comes; the end-to-end output is held until they end, then
// shown whole and followed. It fails when either fails. Arguments (`npm test -- <file>`) run one
// plain `vitest run` with them instead.
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { ROOT } from "./stack.mjs";

const VITEST = `${ROOT}node_modules/.bin/vitest`;
const args = process.argv.slice(2);

/** @param {string[]} argv @param {"inherit" | "pipe"} out */
function vitest(argv, out, env = {}) {
  return spawn(VITEST, ["run", ...argv], {
    cwd: ROOT,
    stdio: ["ignore", out, out],
    env: { ...process.env, ...env },
  });
}

/** @param {import("node:child_process").ChildProcess} child @returns {Promise<number>} */
const exitCode = (child) =>
  new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    // Never started (no vitest installed): a failure, said, not a wait for an exit that never comes.
    child.on("error", (err) => {
      console.error(`vitest could not start: ${err.message}`);
      resolve(1);
    });
  });

if (args.length) process.exit(await exitCode(vitest(args, "inherit")));

const env = { TEST_MAX_WORKERS: String(availableParallelism()) };
const e2e = vitest(["--project", "e2e"], "pipe", env);
/** @type {Buffer[]} */
const held = [];
let following = false;
const take = (/** @type {Buffer} */ chunk) => (following ? process.stdout.write(chunk) : held.push(chunk));
e2e.stdout?.on("data", take);
e2e.stderr?.on("data", take);
const e2eDone = exitCode(e2e);

const rest = vitest(
  ["--project", "unit", "--project", "unit-isolated", "--project", "workers", "--project", "workers-isolated"],
  "inherit",
  env,
);
const children = [e2e, rest];
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"]))
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });

const restCode = await exitCode(rest);
process.stdout.write("\n── the end-to-end project (run beside the others) ──\n");
for (const chunk of held) process.stdout.write(chunk);
following = true;
const e2eCode = await e2eDone;
process.exit(restCode || e2eCode);
