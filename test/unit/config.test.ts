// The wiring the runtime relies on but no handler can see: the queue's retries and dead-letter
// queue, the summarizer's route to the Durable Object, the static assets' routing, and append-only
// DO migrations, and the production environment's bindings and variables, which wrangler does not
// inherit from the top level.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";

const root = new URL("../..", import.meta.url).pathname;
const chat = readFileSync(`${root}wrangler.toml`, "utf8");
const summarizer = readFileSync(`${root}workers/summarizer/wrangler.toml`, "utf8");

describe("wrangler configs", () => {
  it("give the fold consumer retries and a dead-letter queue", () => {
    expect(summarizer).toMatch(/\[\[queues\.consumers\]\][^[]*queue = "context-chat-jobs"/);
    expect(summarizer).toMatch(/max_retries = [1-9]/);
    expect(summarizer).toMatch(/dead_letter_queue = "context-chat-jobs-dlq"/);
    expect(chat).toMatch(/\[\[queues\.producers\]\][^[]*queue = "context-chat-jobs"/);
  });
  it("route the summarizer to the chat worker's Durable Object by script_name", () => {
    const name = /^name = "([^"]+)"/m.exec(chat)![1];
    expect(summarizer).toContain(`class_name = "ConversationDO"`);
    expect(summarizer).toContain(`script_name = "${name}"`);
  });
  it("serve the web UI as static assets while the API, websockets and /health always reach the worker", () => {
    const assets = /^\[assets\]\n((?:[a-z_]+ = .*\n)+)/m.exec(chat)?.[1] ?? "";
    expect(assets).toContain('directory = "workers/chat/public"');
    const first = JSON.parse(/^run_worker_first = (\[.*\])$/m.exec(assets)?.[1] ?? "[]");
    expect(first).toEqual(expect.arrayContaining(["/v1/*", "/health"]));
    expect(readFileSync(`${root}workers/chat/public/index.html`, "utf8")).toContain('src="/js/app.js"');
  });
  it("declare the Durable Object class as a SQLite class in a migration", () => {
    expect(chat).toMatch(/new_sqlite_classes = \["ConversationDO"\]/);
  });
  it("declare production's bindings and variables as the top level does, AI and Vectorize in production only", () => {
    const read = (config: string, env?: string) =>
      unstable_readConfig({ config: `${root}${config}`, env }, { hideWarnings: true });
    const top = read("wrangler.toml");
    const production = read("wrangler.toml", "production");
    for (const key of ["durable_objects", "d1_databases", "r2_buckets", "queues", "vars", "triggers"] as const)
      expect(production[key], key).toEqual(top[key]);
    expect(top.ai).toBeUndefined();
    expect(top.vectorize).toEqual([]);
    expect(production.ai?.binding).toBe("AI");
    expect(production.vectorize.map((v: { binding: string }) => v.binding)).toEqual(["VECTORIZE"]);
    // A variable set in one worker's config and not the other's would split a turn from its folds.
    expect(read("workers/summarizer/wrangler.toml").vars).toEqual(production.vars);
  });
});
