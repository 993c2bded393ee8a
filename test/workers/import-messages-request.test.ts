// An Anthropic Messages request that the API (and the strict offline model) accepts imports
// (core/transcript/transcript-check.ts): a block's `cache_control` (prompt caching) is taken and
// dropped from the stored copy (stored messages never carry it; replay sets its own breakpoints),
// and a `tool_result` without `content` (optional in the API) is stored as the empty result. The
// imported conversation's next turn runs: its replay is a request the offline model accepts.
import { expect, it } from "vitest";
import { EMPTY_RESULT } from "../../core/blank-text";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { createOfflineModelFetch } from "../../core/offline-model";
import { api, importText, newTenant, send, transcript } from "./helpers";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** The offline model's answer to the body as a Messages request: its status. */
const modelStatus = async (body: unknown): Promise<number> => {
  const res = await createOfflineModelFetch()(`${OFFLINE_BASE_URL}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": "offline" },
    body: JSON.stringify(body),
  });
  await res.text();
  return res.status;
};

const tools = [{ name: "do_it", description: "does it", input_schema: { type: "object", properties: {} } }];

const cached = {
  model: "claude-sonnet-5-5",
  max_tokens: 200,
  tools,
  messages: [
    {
      role: "user",
      content: [{ type: "text", text: "hello", cache_control: { type: "ephemeral", ttl: "1h" } }],
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: "running it" },
        { type: "tool_use", id: "toolu_1", name: "do_it", input: {}, cache_control: { type: "ephemeral" } },
      ],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [{ type: "text", text: "done", cache_control: { type: "ephemeral", ttl: "5m" } }],
          cache_control: { type: "ephemeral" },
        },
      ],
    },
  ],
};

// The API takes at most 4 breakpoints a request: the image's go in a request of their own.
const cachedImages = {
  model: "claude-sonnet-5-5",
  max_tokens: 200,
  tools,
  messages: [
    { role: "user", content: "run it" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "do_it", input: {} }] },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG }, cache_control: null },
          ],
        },
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: PNG },
          cache_control: { type: "ephemeral", ttl: "1h" },
        },
      ],
    },
  ],
};

const noResultContent = {
  model: "claude-sonnet-5-5",
  max_tokens: 200,
  tools,
  messages: [
    { role: "user", content: "run it" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "do_it", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1" }] },
  ],
};

// A server tool's call and result take a breakpoint too (the SDK's ServerToolUseBlockParam and
// WebSearchToolResultBlockParam: `cache_control?: CacheControlEphemeral | null`).
const serverCached = {
  model: "claude-sonnet-5-5",
  max_tokens: 200,
  tools: [{ type: "web_search_20250305", name: "web_search" }],
  messages: [
    { role: "user", content: "search" },
    {
      role: "assistant",
      content: [
        {
          type: "server_tool_use",
          id: "srvtoolu_1",
          name: "web_search",
          input: { query: "q" },
          cache_control: { type: "ephemeral", ttl: "1h" },
        },
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_1",
          content: [],
          cache_control: { type: "ephemeral" },
        },
        { type: "text", text: "done" },
      ],
    },
    { role: "user", content: "thanks" },
  ],
};

// An empty list of result blocks, which the API takes as it takes a result without content.
const emptyResultContent = {
  ...noResultContent,
  messages: noResultContent.messages.map((m, i) =>
    i === 2 ? { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [] }] } : m,
  ),
};

it.each([
  ["cache_control on text, tool_use, tool_result and a result's block", cached],
  ["cache_control on a server tool's call and result", serverCached],
  ["a tool_result whose content is an empty list", emptyResultContent],
  ["cache_control on images, in a result and beside it", cachedImages],
  ["a tool_result without content", noResultContent],
] as const)(
  "imports a Messages request the API accepts: %s, and its next turn runs",
  {
    timeout: 60_000,
  },
  async (_label, body) => {
    expect(await modelStatus(body)).toBe(200);
    const key = await newTenant();
    const imported = await importText(JSON.stringify(body), key);
    expect(imported.status, imported.text).toBe(201);
    const id: string = imported.json.id;
    const stored = await transcript(id, key);
    expect(stored).toHaveLength(body.messages.length);
    expect(JSON.stringify(stored)).not.toContain("cache_control");
    const turn = await send(id, "and now?", key);
    expect(turn.status, turn.text).toBe(200);
  },
);

it.each([
  ["without content", noResultContent],
  ["whose content is an empty list", emptyResultContent],
] as const)("stores a tool_result %s as the empty result", { timeout: 60_000 }, async (_label, body) => {
  const key = await newTenant();
  const imported = await importText(JSON.stringify(body), key);
  expect(imported.status, imported.text).toBe(201);
  const [, , results] = await transcript(imported.json.id, key);
  expect(results.content).toEqual([{ type: "tool_result", tool_use_id: "toolu_1", content: EMPTY_RESULT }]);
});

it("keeps a server tool's blocks as they came, less cache_control", { timeout: 60_000 }, async () => {
  const key = await newTenant();
  const imported = await importText(JSON.stringify(serverCached), key);
  expect(imported.status, imported.text).toBe(201);
  const [, reply] = await transcript(imported.json.id, key);
  expect(JSON.stringify(reply.content.slice(0, 2))).toBe(
    '[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},' +
      '{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}]',
  );
});

it("keeps the blocks' other keys in their order when it drops cache_control", { timeout: 60_000 }, async () => {
  const key = await newTenant();
  const imported = await importText(JSON.stringify(cached), key);
  expect(imported.status, imported.text).toBe(201);
  const [, call, results] = await transcript(imported.json.id, key);
  expect(JSON.stringify(call.content[1])).toBe('{"type":"tool_use","id":"toolu_1","name":"do_it","input":{}}');
  expect(JSON.stringify(results.content[0])).toBe(
    '{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"done"}]}',
  );
});

it.each([
  ["a cache_control the API refuses", { type: "ephemeral", ttl: "2h" }, /^messages\[0\]\.content\.0\.cache_control/],
  ["a cache_control of another type", { type: "persistent" }, /^messages\[0\]\.content\.0\.cache_control/],
] as const)("still refuses %s, naming it", { timeout: 60_000 }, async (_label, cacheControl, message) => {
  const key = await newTenant();
  const messages = [{ role: "user", content: [{ type: "text", text: "hello", cache_control: cacheControl }] }];
  const r = await importText(JSON.stringify({ messages }), key);
  expect(r.status, r.text).toBe(400);
  expect(r.json.error?.message).toMatch(message);
  const list = await api("GET", "/v1/conversations", undefined, { key });
  expect(list.json.data).toEqual([]);
});

it("still refuses a tool_result whose content is blank", { timeout: 60_000 }, async () => {
  const key = await newTenant();
  const messages = noResultContent.messages.map((m, i) =>
    i === 2 ? { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: " " }] } : m,
  );
  const r = await importText(JSON.stringify({ messages }), key);
  expect(r.status, r.text).toBe(400);
  expect(r.json.error?.message).toMatch(/^messages\[2\]\.content\.0\.content: must contain non-whitespace text/);
});
