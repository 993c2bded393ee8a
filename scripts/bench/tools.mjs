// bench:tools — tenant MCP servers at scale, on the real local stack: 3 MCP servers (built with the
// SDK's server classes, run here in Node) offering 200 tools in all. Prints: first-request tokens
// with none active against the same tenant with no servers (target: within 10%), tool_search hit@3
// on 20 scripted queries, and a 50-step turn whose every step returns 40 KB, against the window.
// Figures only; not a timed test.
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { get, post, withStack } from "./common.mjs";

const VERBS = ["create", "get", "list", "update", "delete", "search", "archive", "export"];
const SERVERS = {
  crm: {
    domain: "customer relationship records",
    nouns: ["contact", "company", "deal", "invoice", "lead", "ticket", "meeting", "quote", "campaign"],
    count: 70,
  },
  files: {
    domain: "shared drive",
    nouns: ["file", "folder", "permission", "share_link", "revision", "comment", "label", "upload", "shortcut"],
    count: 70,
  },
  weather: {
    domain: "weather service",
    nouns: ["forecast", "alert", "station", "radar_image", "observation", "pollen_report", "tide_table", "storm_track"],
    count: 60,
  },
};
const RESULT_KB = 40;
const STEPS = 50;

/** The tools of one server: verb_noun pairs, in a fixed order, `count` of them. */
const toolsOf = ({ nouns, count }) => nouns.flatMap((n) => VERBS.map((v) => [v, n])).slice(0, count);

function mcpServerFor(name) {
  const spec = SERVERS[name];
  const server = new McpServer({ name: `bench-${name}`, version: "1.0.0" });
  for (const [verb, noun] of toolsOf(spec)) {
    const what = noun.replace(/_/g, " ");
    server.registerTool(
      `${verb}_${noun}`,
      {
        description: `${verb[0].toUpperCase()}${verb.slice(1)} a ${what} in the ${spec.domain}`,
        inputSchema: { id: z.string().optional(), query: z.string().optional() },
      },
      async () => ({
        content: [{ type: "text", text: `${verb} ${what}: ${"r".repeat(RESULT_KB * 1024)}` }],
      }),
    );
  }
  return server;
}

async function startServers() {
  const http = createServer(async (req, res) => {
    const name = (req.url ?? "").split("/")[1];
    if (!SERVERS[name] || req.method !== "POST") return void res.writeHead(404).end();
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const server = mcpServerFor(name);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  return { port: http.address().port, close: () => new Promise((r) => http.close(r)) };
}

/** 20 requests in a user's words, each with the tool that should answer it. */
const QUERIES = [
  ["add a new contact person", "mcp__crm__create_contact"],
  ["find deals by keyword", "mcp__crm__search_deal"],
  ["remove an invoice", "mcp__crm__delete_invoice"],
  ["export the list of leads", "mcp__crm__export_lead"],
  ["archive a support ticket", "mcp__crm__archive_ticket"],
  ["update the meeting time", "mcp__crm__update_meeting"],
  ["show me one company record", "mcp__crm__get_company"],
  ["list my quotes", "mcp__crm__list_quote"],
  ["make a folder in the shared drive", "mcp__files__create_folder"],
  ["change who has permission on a file", "mcp__files__update_permission"],
  ["delete a share link", "mcp__files__delete_share_link"],
  ["list the revisions of a document file", "mcp__files__list_revision"],
  ["search comments", "mcp__files__search_comment"],
  ["archive a label", "mcp__files__archive_label"],
  ["get the weather forecast", "mcp__weather__get_forecast"],
  ["list active storm alerts", "mcp__weather__list_alert"],
  ["search weather stations near me", "mcp__weather__search_station"],
  ["export a radar image", "mcp__weather__export_radar_image"],
  ["get the latest observation", "mcp__weather__get_observation"],
  ["update a pollen report", "mcp__weather__update_pollen_report"],
];

const firstRequestTokens = async (base, title) => {
  const id = (await post(base, "/v1/conversations", { title })).json.id;
  const { json } = await post(base, `/v1/conversations/${id}/messages`, { content: "hello there" });
  const u = json.messages.find((m) => m.role === "assistant").usage;
  return u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
};

export async function benchTools() {
  const mcp = await startServers();
  try {
    await withStack(async (base) => {
      const before = await firstRequestTokens(base, "no servers");
      for (const name of Object.keys(SERVERS)) {
        const { json } = await post(base, "/v1/mcp-servers", { name, url: `http://127.0.0.1:${mcp.port}/${name}` });
        if (json.toolsError) throw new Error(`${name}: ${json.toolsError}`);
      }
      const listed = (await get(base, "/v1/mcp-servers")).data.reduce((n, s) => n + s.tools.length, 0);
      const after = await firstRequestTokens(base, "three servers");
      const growth = (after - before) / before;
      console.log(`MCP servers: ${Object.keys(SERVERS).length}, tools listed: ${listed}`);
      console.log(
        `first request tokens, none active: ${before} without servers -> ${after} with (${(growth * 100).toFixed(1)}%, target within 10%: ${Math.abs(growth) <= 0.1 ? "met" : "missed"})`,
      );

      const conv = (await post(base, "/v1/conversations", { title: "search" })).json.id;
      let hits = 0;
      for (const [query, want] of QUERIES) {
        const { json } = await post(base, `/v1/conversations/${conv}/messages`, {
          content: `@tool tool_search ${JSON.stringify({ query })}`,
        });
        const result = json.messages.flatMap((m) => m.content).find((b) => b.type === "tool_result");
        const top = [...String(result.content).matchAll(/^- (\S+) \(/gm)].slice(0, 3).map((m) => m[1]);
        const hit = top.includes(want);
        hits += hit ? 1 : 0;
        if (!hit) console.log(`  miss: "${query}" wanted ${want}, top 3: ${top.join(", ")}`);
      }
      console.log(`tool_search hit@3: ${hits}/${QUERIES.length} (${((hits / QUERIES.length) * 100).toFixed(0)}%)`);

      const long = (
        await post(base, "/v1/conversations", { title: "50 steps", settings: { maxToolIterations: STEPS + 5 } })
      ).json.id;
      const tool = "mcp__files__get_file";
      await post(base, `/v1/conversations/${long}/messages`, { content: `@tool tool_activate {"name":"${tool}"}` });
      // The task names its items, as a user's list would: the in-turn compactor carries the ones not done yet.
      const ids = Array.from({ length: STEPS }, (_, i) => `file-${String(i + 1).padStart(3, "0")}`);
      const calls = ids.map((id) => `@tool ${tool} {"id":"${id}"}`);
      const started = Date.now();
      const { json } = await post(base, `/v1/conversations/${long}/messages`, {
        content: `Read every file: ${ids.join(", ")}.\n@tools-per-step 1\n${calls.join("\n")}`,
      });
      const done = new Set(
        json.messages
          .flatMap((m) => m.content)
          .filter((b) => b.type === "tool_use" && b.name === tool)
          .map((b) => b.input.id),
      );
      const steps = json.messages.filter((m) => m.role === "assistant" && m.usage);
      const inputs = steps.map(
        (m) =>
          m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0) + (m.usage.cache_creation_input_tokens ?? 0),
      );
      const results = json.messages.flatMap((m) => m.content).filter((b) => b.type === "tool_result");
      const window = (await get(base, `/v1/conversations/${long}`)).settings.contextWindowTokens;
      console.log(
        `50-step turn: ${results.length} results of ${RESULT_KB} KB (${results.filter((r) => r.is_error).length} errors, ${done.size}/${STEPS} items done), ${steps.length} model requests, stop_reason ${json.stop_reason}, largest request ${Math.max(...inputs)} tokens of a ${window}-token window (${Math.max(...inputs) <= window ? "inside" : "OVER"}), ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    });
  } finally {
    await mcp.close();
  }
}
