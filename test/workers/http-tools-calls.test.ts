// HTTP tools in a turn: found by tool_search, activated, called through a scripted model turn
// against a real HTTP server; every failure an is_error result the model can read; retries only
// for idempotent tools, counted by the server; the tool's secret headers sent but never shown.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { api, createConversation, newTenant, send, transcript, turnMessages } from "./helpers";
import type { StoredMessage, ToolResultBlock } from "../../core/types";
import { toolResults } from "../blocks";

const server = inject("httpToolServer");
const schema = { type: "object", properties: { city: { type: "string" } } };
const SECRET = "sk-live-weather-0123456789";

async function register(key: string, name: string, path: string, extra: Record<string, unknown> = {}) {
  const r = await api(
    "POST",
    "/v1/tools",
    {
      kind: "http",
      name,
      description: `${name} calls the test server.`,
      inputSchema: schema,
      endpoint: `${server}${path}`,
      ...extra,
    },
    { key },
  );
  if (r.status !== 201) throw new Error(`register ${name}: ${r.status} ${r.text}`);
  return r.json;
}
/** What the tool server saw of each request (test/workers/http-tool-server.mjs). */
type Seen = { method: string; path: string; headers: Record<string, string | undefined>; body: string };
const seen = async (tag: string): Promise<Seen[]> =>
  (await (await fetch(`${server}/_seen?key=${tag}`)).json()) as Seen[];
const resultsOf = (messages: StoredMessage[]) => toolResults(messages);
const textOf = (b: ToolResultBlock) =>
  typeof b.content === "string" ? b.content : b.content.map((c) => (c.type === "text" ? c.text : "")).join("");

/** One turn that activates the tools and calls each with `input`; the results in call order. */
async function callTools(key: string, names: string[], input: unknown = { city: "Paris" }) {
  const id = await createConversation(undefined, key);
  await send(id, names.map((n) => `@tool tool_activate {"name":"${n}"}`).join("\n"), key);
  const r = await send(id, names.map((n) => `@tool ${n} ${JSON.stringify(input)}`).join("\n"), key);
  expect(r.status).toBe(200);
  return { id, results: resultsOf(turnMessages(r)), messages: r.json.messages };
}

let logged: string[];
beforeEach(() => {
  logged = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    const original = console[level].bind(console);
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(
        args
          .map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : typeof a === "string" ? a : JSON.stringify(a)))
          .join(" "),
      );
      original(...args);
    });
  }
});
afterEach(() => vi.restoreAllMocks());

describe("HTTP tools in a turn", () => {
  it("is found by tool_search, activated, called with the input and its headers, and never shows the secret", async () => {
    const key = await newTenant();
    const tool = await register(key, "weather_now", "/echo?key=echo1", {
      description: "Current weather for a city.",
      headers: { Authorization: `Bearer ${SECRET}` },
    });
    const id = await createConversation(undefined, key);
    const found = await send(id, `@tool tool_search {"query":"current weather of a city"}`, key);
    expect(resultsOf(turnMessages(found))[0].content).toContain(
      'weather_now (inactive: tool_activate {"name":"weather_now"})',
    );
    const early = await send(id, `@tool weather_now {"city":"Paris"}`, key);
    expect(resultsOf(turnMessages(early))[0]).toMatchObject({
      is_error: true,
      content: expect.stringContaining("tool_activate"),
    });
    await send(id, `@tool tool_activate {"name":"weather_now"}`, key);
    const replay = (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json;
    expect(replay.tools.find((t) => t.name === "weather_now")).toEqual({
      name: "weather_now",
      description: "Current weather for a city.",
      input_schema: schema,
    });

    const r = await send(id, `@tool weather_now {"city":"Paris"}`, key);
    const call = r.json.messages[1].content.find((b) => b.type === "tool_use");
    const [result] = resultsOf(turnMessages(r));
    expect(result.is_error).toBeUndefined();
    // What the echo endpoint answered (test/workers/http-tool-server.mjs).
    const body = JSON.parse(textOf(result)) as { received: unknown; headers: Record<string, string>; token: string };
    expect(body.received).toEqual({ city: "Paris" });
    expect(body.headers).toMatchObject({
      "content-type": "application/json",
      "x-tool-name": "weather_now",
      "x-conversation-id": id,
      "idempotency-key": call!.id,
      "x-tool-call-id": call!.id,
      "x-turn-id": expect.any(String),
    });
    // The endpoint echoed the secret back: the stored result has it withheld.
    expect(body.headers.authorization).toBe("[Authorization withheld]");
    expect(body.token).toBe("[Authorization withheld]");
    // The server did receive it.
    expect((await seen("echo1")).at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`);

    const everywhere = [
      (await api("GET", `/v1/tools/${tool.id}`, undefined, { key })).text,
      (await api("GET", "/v1/tools", undefined, { key })).text,
      JSON.stringify(await transcript(id, key)),
      (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).text,
      (await api("GET", `/v1/conversations/${id}/export?format=jsonl`, undefined, { key })).text,
      (await api("GET", `/v1/conversations/${id}/prompts`, undefined, { key })).text,
      JSON.stringify(r.json),
      logged.join("\n"),
    ];
    for (const text of everywhere) expect(text).not.toContain(SECRET);
  });

  it("turns every failure into an is_error result the model can read", async () => {
    const key = await newTenant();
    await register(key, "t500", "/status?code=500&key=f500");
    await register(key, "t404", "/status?code=404&key=f404", { idempotent: true, retries: 3 });
    await register(key, "tslow", "/slow?ms=3000&key=fslow", { timeoutMs: 300 });
    await register(key, "tbig", "/big?bytes=5000&key=fbig", { maxResponseBytes: 1000 });
    await register(
      key,
      "tredir_bad",
      `/redirect?code=307&to=${encodeURIComponent("https://10.1.2.3/steal")}&key=fredir`,
    );
    await register(
      key,
      "tredir_ok",
      `/redirect?code=307&to=${encodeURIComponent(`${server}/echo?key=fredir2`)}&key=fredir2`,
      { headers: { "X-Secret": "redirect-secret-value" } },
    );
    await register(key, "tdrop", "/drop?key=fdrop");
    // A row written before the outbound rules refused its endpoint: checked again at call time.
    const bad = await register(key, "tstale", "/echo?key=fstale");
    await env.DB.prepare(`UPDATE tools SET endpoint = 'https://192.168.0.10/hook' WHERE id = ?`).bind(bad.id).run();
    const names = ["t500", "t404", "tslow", "tbig", "tredir_bad", "tredir_ok", "tdrop", "tstale"];
    const { results } = await callTools(key, names);
    expect(results).toHaveLength(names.length);
    const by = Object.fromEntries(names.map((n, i) => [n, results[i]]));
    expect(by.t500).toMatchObject({ is_error: true, content: "t500: HTTP 500: boom 500 details from the endpoint" });
    expect(by.t404).toMatchObject({ is_error: true, content: "t404: HTTP 404: boom 404 details from the endpoint" });
    expect(by.tslow).toMatchObject({
      is_error: true,
      content: "tslow: no complete answer within 300 ms (the tool's timeoutMs)",
    });
    expect(by.tbig).toMatchObject({
      is_error: true,
      content: "tbig: response larger than 1000 bytes (the tool's maxResponseBytes)",
    });
    expect(by.tredir_bad).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^tredir_bad: redirect to a refused URL: private/),
    });
    expect(by.tdrop).toMatchObject({ is_error: true, content: expect.stringMatching(/^tdrop: network error/) });
    expect(by.tstale).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^tstale: endpoint refused: private/),
    });
    // A checked redirect is followed (307 keeps the POST and its body), same origin: headers kept.
    expect(by.tredir_ok.is_error).toBeUndefined();
    expect(JSON.parse(textOf(by.tredir_ok)).received).toEqual({ city: "Paris" });
    expect((await seen("fredir2")).map((s) => s.path)).toEqual(["/redirect", "/echo"]);
    // A 404 is not retried even for an idempotent tool; nothing reached the refused hosts.
    expect(await seen("f404")).toHaveLength(1);
    expect(await seen("fstale")).toHaveLength(0);
  });

  it("retries network errors, 429 and 5xx with backoff only for idempotent tools, as the server counts", async () => {
    const key = await newTenant();
    await register(key, "once", "/flaky?fail=2&code=503&key=r-once", { retries: 0 });
    // The API refuses retries without idempotent; a row that has them anyway is still called once.
    const notIdem = await register(key, "not_idem", "/flaky?fail=2&code=503&key=r-notidem");
    await env.DB.prepare(`UPDATE tools SET retries = 3 WHERE id = ?`).bind(notIdem.id).run();
    await register(key, "recovers", "/flaky?fail=2&code=503&key=r-recovers", { idempotent: true, retries: 2 });
    await register(key, "limited", "/flaky?fail=9&code=429&key=r-limited", { idempotent: true, retries: 1 });
    await register(key, "dropped", "/drop?key=r-drop", { idempotent: true, retries: 3 });
    const started = Date.now();
    const { results } = await callTools(key, ["once", "not_idem", "recovers", "limited", "dropped"]);
    expect(results[0]).toMatchObject({ is_error: true, content: "once: HTTP 503: failing attempt 1" });
    expect(results[1]).toMatchObject({ is_error: true, content: "not_idem: HTTP 503: failing attempt 1" });
    expect(results[2].is_error).toBeUndefined();
    expect(results[2].content).toBe("ok on attempt 3");
    expect(results[3]).toMatchObject({
      is_error: true,
      content: "limited: HTTP 429: failing attempt 2 (after 2 attempts)",
    });
    expect(results[4]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^dropped: network error.*\(after 4 attempts\)$/),
    });
    expect((await seen("r-once")).length).toBe(1);
    expect((await seen("r-notidem")).length).toBe(1);
    expect((await seen("r-recovers")).length).toBe(3);
    expect((await seen("r-limited")).length).toBe(2);
    expect((await seen("r-drop")).length).toBe(4);
    // Each retry carries the same idempotency key (the tool_use id).
    const keys = new Set((await seen("r-recovers")).map((s) => s.headers["idempotency-key"]));
    expect(keys.size).toBe(1);
    // Backoff: 250 + 500 ms before the third attempt of "recovers", 250 + 500 + 1000 for "dropped".
    expect(Date.now() - started).toBeGreaterThanOrEqual(750 + 250 + 1750);
  });

  it("lists a tool registered today in <capabilities> from the next UTC day, while tool_search finds it at once", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const before = (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json;
    await register(key, "geo_lookup", "/echo?key=day", { description: "Finds coordinates of a place." });
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    // The object's live list is re-read within TENANT_TOOLS_TTL_MS; an eviction makes it now.
    await evictDurableObject(stub);
    const found = await send(id, `@tool tool_search {"query":"coordinates of a place"}`, key);
    expect(resultsOf(turnMessages(found))[0].content).toContain("geo_lookup (inactive");
    const today = (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json;
    expect(JSON.stringify(today.system)).toBe(JSON.stringify(before.system));
    expect(JSON.stringify(today.system)).not.toContain("geo_lookup");
    // The day turns: the snapshot the object kept is yesterday's.
    await runInDurableObject(stub, async (_i, state) => {
      const kept = await state.storage.get<{ day: string; lines: string[] }>("tenant-tool-index");
      expect(kept!.lines).toEqual([]);
      await state.storage.put("tenant-tool-index", { ...kept, day: "2000-01-01" });
    });
    await evictDurableObject(stub);
    const next = (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json;
    expect(next.system[0].text).toContain("geo_lookup: Finds coordinates of a place. (tool_activate first)");
  });

  it("gives a project's conversations the project's tools, and others only the tenant-wide ones", async () => {
    const key = await newTenant();
    const proj = (await api("POST", "/v1/projects", { name: "p" }, { key })).json.id;
    await register(key, "shared", "/echo?key=scope-wide");
    await register(key, "shared", "/echo?key=scope-proj", { projectId: proj });
    await register(key, "proj_only", "/echo?key=scope-only", { projectId: proj });
    const inProject = (await api("POST", "/v1/conversations", { title: "in", projectId: proj }, { key })).json.id;
    await send(inProject, `@tool tool_activate {"name":"shared"}\n@tool tool_activate {"name":"proj_only"}`, key);
    const r = await send(inProject, `@tool shared {}\n@tool proj_only {}`, key);
    expect(resultsOf(turnMessages(r)).map((b) => b.is_error)).toEqual([undefined, undefined]);
    expect(await seen("scope-proj")).toHaveLength(1);
    expect(await seen("scope-wide")).toHaveLength(0);
    const { results } = await callTools(key, ["shared", "proj_only"], {});
    expect(results[0].is_error).toBeUndefined();
    expect(results[1]).toMatchObject({ is_error: true });
    expect(textOf(results[1])).toContain("unknown tool");
    expect(await seen("scope-wide")).toHaveLength(1);
  });
});
