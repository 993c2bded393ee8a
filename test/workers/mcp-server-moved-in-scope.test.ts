// A conversation's MCP tools come from the servers it sees: the tenant-wide ones and its project's.
// A server moved between the two is still one of them, and its tools are called as before (they
// answered "no longer registered" for up to 30 s, while the cached list still named the old
// place); a server renamed, deleted, or moved to another project is refused as before.
import { describe, expect, it } from "vitest";
import { toolResults, resultText } from "../blocks";
import { api, newTenant, send, turnMessages } from "./helpers";
import { FAKE_MCP, installFakeMcp, rpcResult } from "./mcp-fake-server";

const fake = installFakeMcp();
const obj = { type: "object", properties: { q: { type: "string" } } };

describe("an MCP server moved within the conversation's scope", () => {
  it("is called from tenant-wide to the conversation's project and back; not once in another project", async () => {
    const key = await newTenant();
    const own = (await api("POST", "/v1/projects", { name: "own" }, { key })).json.id;
    const other = (await api("POST", "/v1/projects", { name: "other" }, { key })).json.id;
    fake.tools["/mv"] = [{ name: "echo", description: "echo", inputSchema: obj }];
    const s = await api("POST", "/v1/mcp-servers", { name: "mv", url: `${FAKE_MCP}/mv` }, { key });
    expect(s.status, s.text).toBe(201);
    const conv = (await api("POST", "/v1/conversations", { title: "c", projectId: own }, { key })).json.id;
    let calls = 0;
    fake.onCall = (_path, rpc) => (calls++, rpcResult(rpc.id, { content: [{ type: "text", text: "ran" }] }));
    const call = async () => {
      const r = toolResults(turnMessages(await send(conv, `@tool mcp__mv__echo {"q":"x"}`, key)))[0];
      return { is_error: r.is_error ?? false, text: resultText(r) };
    };
    const moveTo = async (projectId: string | null) =>
      expect((await api("PATCH", `/v1/mcp-servers/${s.json.id}`, { projectId }, { key })).json.projectId).toBe(
        projectId,
      );

    await send(conv, `@tool tool_activate {"name":"mcp__mv__echo"}`, key);
    expect(await call()).toEqual({ is_error: false, text: "ran" });
    await moveTo(own);
    expect(await call()).toEqual({ is_error: false, text: "ran" });
    await moveTo(null);
    expect(await call()).toEqual({ is_error: false, text: "ran" });
    expect(calls).toBe(3);
    await moveTo(other);
    expect(await call()).toEqual({ is_error: true, text: "the tool mcp__mv__echo is no longer registered" });
    expect(calls).toBe(3);
  }, 60_000);
});
