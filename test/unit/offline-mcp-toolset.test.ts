// The MCP connector's current form (https://platform.claude.com/docs/en/agents-and-tools/mcp-connector):
// under mcp-client-2025-11-20 (and the later mcp-client-2026-09-15 the pinned SDK lists) a server in
// `mcp_servers` is configured by one `{type: "mcp_toolset", mcp_server_name, …}` tool in `tools`. The
// documented requests go through the real SDK's beta client, typed with its BetaMCPToolset, so the
// SDK's own types vouch for them; the page's validation rules are checked on the raw wire.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { FIXTURE_DAY, fieldsOnFixtureDay, makeClient, rejection } from "./offline-model-client";

type BetaParams = Anthropic.Beta.Messages.MessageCreateParamsNonStreaming;

beforeEach(() => resetOfflineCache());

const CURRENT = "mcp-client-2025-11-20";
const LATER = "mcp-client-2026-09-15";

const server = (name: string, url = "https://example-server.modelcontextprotocol.io/sse") => ({
  type: "url" as const,
  url,
  name,
});

/** The page's basic example: one server, its toolset with every tool enabled. */
const basic: BetaParams = {
  model: "claude-sonnet-5-5",
  max_tokens: 1000,
  messages: [{ role: "user", content: "What tools do you have available?" }],
  mcp_servers: [{ ...server("example-mcp"), authorization_token: "YOUR_TOKEN" }],
  tools: [{ type: "mcp_toolset", mcp_server_name: "example-mcp" }],
  betas: [CURRENT],
};

const post = fieldsOnFixtureDay;

describe("mcp_toolset, as the connector docs and the pinned SDK give it", () => {
  const client = makeClient({ now: () => FIXTURE_DAY });

  it("takes the docs' basic request under mcp-client-2025-11-20 and mcp-client-2026-09-15", async () => {
    for (const beta of [CURRENT, LATER]) {
      const message = await client.beta.messages.create({ ...basic, betas: [beta] });
      expect(message.stop_reason, beta).toBe("end_turn");
    }
  });

  it("takes every field the SDK's BetaMCPToolset declares, and any tool name in configs", async () => {
    const message = await client.beta.messages.create({
      ...basic,
      betas: [LATER],
      tools: [
        {
          type: "mcp_toolset",
          mcp_server_name: "example-mcp",
          default_config: { enabled: false, defer_loading: true },
          // A name the server may not have: "a backend warning is logged but no error is returned".
          configs: { search_events: { enabled: true, defer_loading: false }, list_events: {} },
          cache_control: { type: "ephemeral", ttl: "1h" },
          tools: [
            { name: "search_events", input_schema: { type: "object" }, description: null },
            { name: "list_events", input_schema: {} },
          ],
        },
      ],
    });
    expect(message.stop_reason).toBe("end_turn");
  });

  it("takes the docs' two servers, each with its toolset, beside a custom tool, on count_tokens too", async () => {
    const params: BetaParams = {
      ...basic,
      mcp_servers: [
        server("mcp-server-1", "https://mcp.example1.com/sse"),
        server("mcp-server-2", "https://mcp.example2.com/sse"),
      ],
      tools: [
        { type: "mcp_toolset", mcp_server_name: "mcp-server-1" },
        { type: "mcp_toolset", mcp_server_name: "mcp-server-2", default_config: { defer_loading: true } },
        { name: "read_file", description: "Read a file.", input_schema: { type: "object" } },
      ],
    };
    expect((await client.beta.messages.create(params)).stop_reason).toBe("end_turn");
    const count = await client.beta.messages.countTokens({
      model: params.model,
      messages: params.messages,
      mcp_servers: params.mcp_servers,
      tools: params.tools,
      betas: [CURRENT],
    });
    expect(count.input_tokens).toBeGreaterThan(0);
  });

  it("refuses it through the SDK without a connector header that has it", async () => {
    const error = await rejection(client.beta.messages.create({ ...basic, betas: ["mcp-client-2025-04-04"] }));
    expect(error.status).toBe(400);
    expect(error.message).toContain("tools.0: Input tag 'mcp_toolset' found using 'type'");
  });

  it("holds every later version to the docs' validation rules", async () => {
    const toolset = (name: string) => ({ type: "mcp_toolset", mcp_server_name: name });
    const one = [server("example-mcp")];
    for (const beta of [CURRENT, `fast-mode-2026-02-01, ${LATER}`]) {
      expect(await post({ mcp_servers: one, tools: [toolset("other")] }, { beta }), beta).toEqual({
        status: 400,
        message: "tools.0.mcp_toolset.mcp_server_name: no MCP server named 'other' is defined in mcp_servers",
      });
      expect(await post({ mcp_servers: one }, { beta }), beta).toEqual({
        status: 400,
        message: "mcp_servers.0: MCP server 'example-mcp' must be referenced by exactly one mcp_toolset in tools",
      });
      expect(
        await post({ mcp_servers: one, tools: [toolset("example-mcp"), toolset("example-mcp")] }, { beta }),
        beta,
      ).toEqual({
        status: 400,
        message:
          "tools.1.mcp_toolset.mcp_server_name: MCP server 'example-mcp' is already referenced by the mcp_toolset at tools.0; each MCP server can only be referenced by one mcp_toolset",
      });
    }
    const path = "/v1/messages/count_tokens";
    expect((await post({ mcp_servers: one }, { beta: CURRENT, path })).status).toBe(400);
    expect((await post({ mcp_servers: one, tools: [toolset("example-mcp")] }, { beta: CURRENT, path })).status).toBe(
      200,
    );
  });

  it("leaves the deprecated mcp-client-2025-04-04 as it was: servers without toolsets", async () => {
    expect((await post({ mcp_servers: [server("example-mcp")] }, { beta: "mcp-client-2025-04-04" })).status).toBe(200);
  });
});
