// Which Chromium the browser tests drive. `CHROMIUM_PATH` wins, then a system Chromium at
// /usr/bin/chromium, else the binary that ships inside the `@sparticuz/chromium` devDependency
// (unpacked to /tmp on first use), so `npm install && npm test` needs nothing from apt.
import { existsSync } from "node:fs";
import type { Page } from "playwright-core";

export interface BrowserChoice {
  executablePath: string;
  args: string[];
  source: "CHROMIUM_PATH" | "system" | "@sparticuz/chromium";
}

/** Flags that keep Chromium off the network this machine does not have, and out of the sandbox root refuses. */
const QUIET = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The flag that runs the whole browser in one process, renderers included. */
export const SINGLE_PROCESS = "--single-process";

export async function chooseChromium(
  env: Record<string, string | undefined> = process.env as Record<string, string | undefined>,
): Promise<BrowserChoice> {
  if (env.CHROMIUM_PATH) {
    if (!existsSync(env.CHROMIUM_PATH)) throw new Error(`CHROMIUM_PATH=${env.CHROMIUM_PATH} does not exist`);
    return { executablePath: env.CHROMIUM_PATH, args: QUIET, source: "CHROMIUM_PATH" };
  }
  if (existsSync("/usr/bin/chromium")) return { executablePath: "/usr/bin/chromium", args: QUIET, source: "system" };
  const { default: packaged } = await import("@sparticuz/chromium");
  const executablePath = await packaged.executablePath();
  // The package's own flags (headless shell, swiftshader GL) plus the quiet ones it lacks, but not
  // --single-process: it suits a Lambda sandbox, and here it let a test's closing of a second
  // browser context take the whole browser down, failing every later test of the file.
  const own = packaged.args.filter((flag) => flag !== SINGLE_PROCESS);
  const args = [...own, ...QUIET.filter((flag) => !own.includes(flag))];
  return { executablePath, args, source: "@sparticuz/chromium" };
}

/** Keeps the page's websockets reachable as `window.sockets`, so a test can drop one as a network would. */
export async function keepSockets(page: Page): Promise<void> {
  // Runs in the page; typed through globalThis, as this file is also checked without the DOM library.
  await page.addInitScript(() => {
    // The page's window (this file is also compiled without the DOM library).
    const w = globalThis as unknown as {
      WebSocket: new (url: string | URL, protocols?: string | string[]) => object;
      sockets: object[];
    };
    const Native = w.WebSocket;
    const sockets: object[] = [];
    w.sockets = sockets;
    w.WebSocket = class extends Native {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        sockets.push(this);
      }
    };
  });
}

declare global {
  /** What the UI tests' init scripts keep on the page's window. */
  interface Window {
    sockets: WebSocket[];
    sawWaiting?: boolean;
    sawRunningCard?: boolean;
    hacked?: boolean;
    axe: {
      run(
        context: unknown,
        options: unknown,
      ): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }>;
    };
  }
}
