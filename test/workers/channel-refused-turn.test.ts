// A channel turn whose client tools clash with the tenant's own registered tools (a registered
// client or HTTP tool, or an MCP server's tool) is a 400 before the channel is resolved: it neither
// creates the channel (nor its first conversation) nor rotates an idle one. A tool of a project is
// no clash, as a channel's conversations belong to no project.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";
import { FAKE_MCP, installFakeMcp } from "./mcp-fake-server";

const fake = installFakeMcp();
const clientTool = (name: string) => ({
  name,
  description: "A client tool",
  input_schema: { type: "object", properties: {} },
});
const registered = (name: string, projectId?: string) => ({
  kind: "client",
  name,
  description: "Tenant tool.",
  inputSchema: { type: "object" },
  ...(projectId ? { projectId } : {}),
});

async function conversationTitles(key: string): Promise<string[]> {
  const list = await api("GET", "/v1/conversations", undefined, { key });
  expect(list.status).toBe(200);
  return (list.json.data as { title: string }[]).map((c) => c.title);
}

describe("a channel turn refused for a client tool the tenant registered", () => {
  it("creates neither the channel nor its conversation", async () => {
    const key = await newTenant();
    expect((await api("POST", "/v1/tools", registered("pick_color"), { key })).status).toBe(201);
    const refused = await api(
      "POST",
      "/v1/channels/inbox/messages",
      { content: "hi", tools: [clientTool("other_tool"), clientTool("pick_color")] },
      { key },
    );
    expect(refused.status).toBe(400);
    expect(refused.json.error?.message).toBe("tools: pick_color already registered for this tenant");
    expect((await api("GET", "/v1/channels/inbox", undefined, { key })).status).toBe(404);
    expect(await conversationTitles(key)).toEqual([]);
  });

  it("does not rotate an idle channel", async () => {
    const key = await newTenant();
    expect((await api("POST", "/v1/tools", registered("pick_color"), { key })).status).toBe(201);
    expect((await api("PATCH", "/v1/channels/inbox", { rotationSeconds: 1 }, { key })).status).toBe(200);
    expect((await api("POST", "/v1/channels/inbox/messages", { content: "hello" }, { key })).status).toBe(200);
    const before = (await api("GET", "/v1/channels/inbox", undefined, { key })).json;
    expect(before.conversationId).toBeTruthy();
    await new Promise((r) => setTimeout(r, 2500));
    const refused = await api(
      "POST",
      "/v1/channels/inbox/messages",
      { content: "hi", tools: [clientTool("pick_color")] },
      { key },
    );
    expect(refused.status).toBe(400);
    const after = (await api("GET", "/v1/channels/inbox", undefined, { key })).json;
    expect(after.conversationId).toBe(before.conversationId);
    expect(after.rotations).toBe(0);
    expect(await conversationTitles(key)).toEqual(["#inbox"]);
  }, 30_000);

  it("is refused for an MCP server's tool name too, before the channel exists", async () => {
    const key = await newTenant();
    fake.tools["/chsrv"] = [{ name: "echo", description: "echo", inputSchema: { type: "object" } }];
    const server = await api("POST", "/v1/mcp-servers", { name: "chsrv", url: `${FAKE_MCP}/chsrv` }, { key });
    expect(server.status).toBe(201);
    const refused = await api(
      "POST",
      "/v1/channels/desk/messages",
      { content: "hi", tools: [clientTool("mcp__chsrv__echo")] },
      { key },
    );
    expect(refused.status).toBe(400);
    expect(refused.json.error?.message).toBe("tools: mcp__chsrv__echo already registered for this tenant");
    expect((await api("GET", "/v1/channels/desk", undefined, { key })).status).toBe(404);
    expect(await conversationTitles(key)).toEqual([]);
  });

  it("runs when the same name is only a project's tool (a channel's conversation has no project)", async () => {
    const key = await newTenant();
    const project = await api("POST", "/v1/projects", { name: "Apollo" }, { key });
    expect(project.status).toBe(201);
    expect((await api("POST", "/v1/tools", registered("pick_color", project.json.id), { key })).status).toBe(201);
    const ran = await api(
      "POST",
      "/v1/channels/inbox/messages",
      { content: "hi", tools: [clientTool("pick_color")] },
      { key },
    );
    expect(ran.status).toBe(200);
    expect(await conversationTitles(key)).toEqual(["#inbox"]);
  });
});
