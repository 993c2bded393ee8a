// Starts the local stack the way `npm start` does — D1 migrations applied (DB and every cortex
// shard), then `wrangler dev` with the chat and summarizer configs in one process tree — and waits
// for /health.
// Used by `npm start`, the end-to-end tests and the benchmarks.
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { cortexShardDatabases } from "./wrangler-shards.mjs";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const WRANGLER = `${ROOT}node_modules/.bin/wrangler`;
export const DATABASE = "context-chat";

/**
 * The summarizer's local vars. `wrangler dev` hands `--var` to the first config only and reads
 * each other worker's vars from the .dev.vars beside its config, so the local-dev switch (which
 * lets the summarizer use the offline model without a key) and the root .dev.vars (the API key
 * and friends, so both workers talk to the same model) are written there.
 */
export function summarizerDevVars(rootVars = "") {
  return `${rootVars}${rootVars && !rootVars.endsWith("\n") ? "\n" : ""}DEV_BOOTSTRAP=true\n`;
}

export function writeSummarizerDevVars() {
  const root = `${ROOT}.dev.vars`;
  const target = `${ROOT}workers/summarizer/.dev.vars`;
  const vars = summarizerDevVars(existsSync(root) ? readFileSync(root, "utf8") : "");
  if (existsSync(target) && readFileSync(target, "utf8") === vars) return;
  // Stacks start in parallel (tests): a rename never lets wrangler read a half-written file.
  const tmp = `${target}.${process.pid}.tmp`;
  writeFileSync(tmp, vars);
  renameSync(tmp, target);
}

/**
 * The local key that seals tenant tools' headers (TOOL_SECRETS_KEY): generated once and kept next
 * to the local state, so a restart can still open what was sealed before. A key set in the root
 * .dev.vars wins (null here).
 * @param {string} [stateDir]
 */
export function devToolSecretsKey(stateDir = `${ROOT}.wrangler`) {
  const devVars = `${ROOT}.dev.vars`;
  if (existsSync(devVars) && /^TOOL_SECRETS_KEY=/m.test(readFileSync(devVars, "utf8"))) return null;
  const file = `${stateDir}/tool-secrets-key`;
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(stateDir, { recursive: true });
  const key = randomBytes(32).toString("base64");
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/**
 * Local dev lets HTTP tools and MCP servers run on this machine (ALLOW_LOOPBACK_TOOLS; off
 * everywhere else unless set) and seals their headers under the generated dev key.
 * `inspectorPort`: the devtools port; without it wrangler takes 9229 when it looks free, a port
 * every stack started at the same moment reaches for.
 * @param {{ port?: number, inspectorPort?: number, persistTo?: string, vars?: Record<string, string> }} [opts]
 */
export function wranglerDevArgs({ port = 8787, inspectorPort, persistTo, vars = {} } = {}) {
  const args = [
    "dev",
    "-c",
    "wrangler.toml",
    "-c",
    "workers/summarizer/wrangler.toml",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
  ];
  if (inspectorPort !== undefined) args.push("--inspector-port", String(inspectorPort));
  if (persistTo) args.push("--persist-to", persistTo);
  const toolKey = devToolSecretsKey(persistTo);
  const local = {
    DEV_BOOTSTRAP: "true",
    ALLOW_LOOPBACK_TOOLS: "true",
    ...(toolKey ? { TOOL_SECRETS_KEY: toolKey } : {}),
  };
  for (const [k, v] of Object.entries({ ...local, ...vars })) args.push("--var", `${k}:${v}`);
  return args;
}

/**
 * What a local state's databases were last migrated to: each database's name with the name and
 * SHA-256 of every migration file of its folder.
 */
function migrationsFingerprint(databases) {
  const folder = (database) => (database === DATABASE ? "d1-migrations" : "d1-migrations/cortex-shard");
  return JSON.stringify(
    databases.map((database) => [
      database,
      readdirSync(`${ROOT}${folder(database)}`)
        .filter((name) => name.endsWith(".sql"))
        .sort()
        .map((name) => [
          name,
          createHash("sha256")
            .update(readFileSync(`${ROOT}${folder(database)}/${name}`))
            .digest("hex"),
        ]),
    ]),
  );
}

/**
 * Where the databases of a fresh state, once migrated, are kept for the next fresh state to copy:
 * one folder per set of migration files, wrangler.toml (its database ids name the files) and
 * wrangler version, so a change to any of them makes a new one.
 * @param {string} fingerprint
 */
function migratedCopyFolder(fingerprint) {
  const key = createHash("sha256")
    .update(fingerprint)
    .update(readFileSync(`${ROOT}wrangler.toml`))
    .update(JSON.parse(readFileSync(`${ROOT}node_modules/wrangler/package.json`, "utf8")).version)
    .digest("hex")
    .slice(0, 16);
  return `${ROOT}.wrangler/migrated-d1/${key}`;
}

/**
 * Keeps a just-migrated fresh state's D1 folder as the copy later fresh states start from. Made
 * beside and renamed into place, so a stack starting meanwhile sees all of it or none; when two
 * made one at once, the first rename wins and the other's copy is dropped.
 * @param {string} d1State @param {string} folder
 */
function keepMigratedCopy(d1State, folder) {
  const tmp = `${folder}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(`${ROOT}.wrangler/migrated-d1`, { recursive: true });
  cpSync(d1State, tmp, { recursive: true });
  try {
    renameSync(tmp, folder);
  } catch {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * DB's migrations, then every cortex shard's: one `wrangler d1 migrations apply` per database,
 * seconds each (about 28 s for all on an idle 2-core machine, more on a busy one). A state whose
 * databases are all there and were migrated from the same files (a marker beside wrangler's D1
 * files, written after every database applied) is left as it is, so a restart of the stack over
 * its state does not pay them again; a fresh state (no database yet) starts from a copy of the
 * last fresh state migrated from the same files (`.wrangler/migrated-d1/`), so only the first
 * pays them: every end-to-end file with a stack of its own starts from one.
 * @param {{ persistTo?: string, stdio?: "pipe" | "inherit" }} [opts]
 */
export function applyMigrations({ persistTo, stdio = "pipe" } = {}) {
  const databases = [DATABASE, ...cortexShardDatabases(readFileSync(`${ROOT}wrangler.toml`, "utf8"))];
  const d1State = `${persistTo ?? `${ROOT}.wrangler/state`}/v3/d1`;
  const marker = `${d1State}/context-chat-migrations.json`;
  const fingerprint = migrationsFingerprint(databases);
  const files = existsSync(`${d1State}/miniflare-D1DatabaseObject`)
    ? readdirSync(`${d1State}/miniflare-D1DatabaseObject`).filter((f) => /^[0-9a-f]{64}\.sqlite$/.test(f))
    : [];
  if (files.length >= databases.length && existsSync(marker) && readFileSync(marker, "utf8") === fingerprint) return;
  const copy = migratedCopyFolder(fingerprint);
  const fresh = files.length === 0;
  if (fresh && existsSync(`${copy}/context-chat-migrations.json`)) {
    cpSync(copy, d1State, { recursive: true });
    return;
  }
  rmSync(marker, { force: true });
  for (const database of databases) {
    const args = ["d1", "migrations", "apply", database, "--local"];
    if (persistTo) args.push("--persist-to", persistTo);
    const res = spawnSync(WRANGLER, args, { cwd: ROOT, stdio, env: { ...process.env, CI: "true" }, encoding: "utf8" });
    if (res.status !== 0)
      throw new Error(`d1 migrations of ${database} failed: ${res.stderr || res.stdout || res.status}`);
  }
  writeFileSync(marker, fingerprint);
  if (fresh) keepMigratedCopy(d1State, copy);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts a throwaway stack on a free port; resolves once /health answers.
 * @param {{ persistTo?: string, vars?: Record<string, string>, timeoutMs?: number, log?: boolean }} [opts]
 */
export async function startStack({ persistTo, vars, timeoutMs = 120_000, log = false } = {}) {
  const port = await freePort();
  // A port just closed may be handed out again at once: never the HTTP port twice.
  let inspectorPort = await freePort();
  while (inspectorPort === port) inspectorPort = await freePort();
  applyMigrations({ persistTo });
  writeSummarizerDevVars();
  const child = spawn(WRANGLER, wranglerDevArgs({ port, inspectorPort, persistTo, vars }), {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk) => {
    output += chunk;
    if (output.length > 200_000) output = output.slice(-100_000);
    if (log) process.stderr.write(chunk);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${output.slice(-4000)}`);
    try {
      const res = await fetch(`${baseUrl}/health`);
      if (res.ok) break;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  if (Date.now() >= deadline) {
    stopProcessTree(child);
    throw new Error(`stack did not answer /health within ${timeoutMs} ms:\n${output.slice(-4000)}`);
  }
  return {
    baseUrl,
    port,
    output: () => output,
    stop: () => stopProcessTree(child),
    /** A crash, not a shutdown: SIGKILL to the whole tree, nothing gets to finish. */
    kill: () => stopProcessTree(child, "SIGKILL"),
  };
}

/**
 * Resolves once every process of the group is gone, not only wrangler: workerd may hold its
 * sockets a moment after wrangler exits, and a stack restarted meanwhile cannot bind them.
 */
async function groupGone(pid, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(-pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function stopProcessTree(child, signal = "SIGTERM") {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return groupGone(child.pid).then(resolve);
    child.once("exit", () => groupGone(child.pid).then(resolve));
    try {
      process.kill(-child.pid, signal);
    } catch {
      return resolve();
    }
    setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone
      }
    }, 5_000).unref();
  });
}
