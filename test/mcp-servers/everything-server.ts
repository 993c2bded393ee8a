// The MCP reference "everything" server (@modelcontextprotocol/server-everything, by the Model
// Context Protocol project, modelcontextprotocol/servers; MIT License per its README, the
// npm package ships no LICENSE file): an independent
// implementation this project did not write, run in its streamableHttp mode on a free port.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

export async function startEverythingServer(): Promise<{ port: number; child: ChildProcess }> {
  const pkg = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json");
  const port = await freePort();
  const child = spawn(process.execPath, [join(dirname(pkg), "dist/index.js"), "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("everything server did not start in 20 s")), 20_000);
    let log = "";
    child.stderr!.on("data", (d: Buffer) => {
      log += d.toString();
      if (log.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => reject(new Error(`everything server exited (${code}): ${log}`)));
  });
  return { port, child };
}
