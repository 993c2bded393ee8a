// A call of an MCP tool against a scripted server (mcp-fake-server.ts): content the SDK has no
// schema for is shown as a note, not a failed call; each session is ended with a DELETE; a
// server's own error that mentions a timeout is its message, not the platform's timeout; and a
// server moved to another project, or renamed, is no longer called from the old conversations.
import { describe, expect, it } from "vitest";
import { toolResults, resultText } from "../blocks";
import { api, createConversation, newTenant, send, turnMessages } from "./helpers";
import { SESSION_END_MS } from "../../services/mcp/connect";
import { FAKE_MCP, installFakeMcp, rpcError, rpcResult } from "./mcp-fake-server";

const fake = installFakeMcp();
const obj = { type: "object", properties: { q: { type: "string" } } };
const results = (turn: { text: string }) => toolResults(turnMessages(turn));

/** A new tenant with server `name` at FAKE_MCP/<name> publishing one tool `echo`, and a conversation. */
async function serverWithEcho(name: string, projectId?: string, key?: string) {
  key ??= await newTenant();
  fake.tools[`/${name}`] = [{ name: "echo", description: "echo", inputSchema: obj }];
  const s = await api("POST", "/v1/mcp-servers", { name, url: `${FAKE_MCP}/${name}`, projectId }, { key });
  expect(s.status).toBe(201);
  const conv = projectId
    ? (await api("POST", "/v1/conversations", { title: "c", projectId }, { key })).json.id
    : await createConversation(undefined, key);
  return { key, id: s.json.id, conv };
}

describe("an MCP tool's result", () => {
  it("with a content type the SDK does not know keeps its other blocks, and notes the unknown one", async () => {
    const { key, conv } = await serverWithEcho("novel");
    fake.onCall = (_path, rpc) =>
      rpcResult(rpc.id, {
        content: [
          { type: "text", text: "hello" },
          { type: "video", uri: "https://example.com/v.mp4" },
          { text: "no type" },
        ],
      });
    const t = await send(
      conv,
      `@tool tool_activate {"name":"mcp__novel__echo"}\n@tool mcp__novel__echo {"q":"x"}`,
      key,
    );
    const r = results(t)[1];
    expect(r.is_error).toBeFalsy();
    expect(resultText(r)).toBe("hello\n[video content not shown]\n[content not shown: a block with no type]");
  });

  it("that is a JSON-RPC error mentioning a timeout is the server's message, not the platform's timeout", async () => {
    const { key, conv } = await serverWithEcho("dbq");
    fake.onCall = (_path, rpc) => rpcError(rpc.id, { code: -32000, message: "database query timed out after 2s" });
    const t = await send(conv, `@tool tool_activate {"name":"mcp__dbq__echo"}\n@tool mcp__dbq__echo {"q":"x"}`, key);
    const r = results(t)[1];
    expect(r.is_error).toBe(true);
    expect(resultText(r)).toBe('MCP tool echo on "dbq" failed: MCP error -32000: database query timed out after 2s');
  });
});

describe("an MCP session", () => {
  it("is ended with a DELETE carrying its session id, after a listing and after a call", async () => {
    const { key, conv } = await serverWithEcho("sess");
    const opened = () => new Set(fake.log.filter((l) => l.path === "/sess" && l.session).map((l) => l.session));
    const ended = () =>
      new Set(fake.log.filter((l) => l.method === "DELETE" && l.path === "/sess").map((l) => l.session));
    // The registration's listing (the log was cleared before this test).
    expect(opened().size).toBe(1);
    expect(ended()).toEqual(opened());
    await send(conv, `@tool tool_activate {"name":"mcp__sess__echo"}\n@tool mcp__sess__echo {"q":"x"}`, key);
    expect(opened().size).toBe(2);
    expect(ended()).toEqual(opened());
  });

  it("whose DELETE is refused (405) or fails still answers the call", async () => {
    const { key, conv } = await serverWithEcho("nodel");
    const t = await send(conv, `@tool tool_activate {"name":"mcp__nodel__echo"}`, key);
    expect(results(t)[0].is_error).toBeFalsy();
    for (const status of [405, 500]) {
      const original = globalThis.fetch;
      globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) =>
        new Request(input, init).method === "DELETE"
          ? new Response(null, { status })
          : original(input, init)) as typeof fetch;
      try {
        const r = results(await send(conv, `@tool mcp__nodel__echo {"q":"x"}`, key))[0];
        expect(resultText(r)).toBe("ok");
      } finally {
        globalThis.fetch = original;
      }
    }
  });
});

describe("an MCP session whose DELETE is never answered", () => {
  it("holds a call's answer at most SESSION_END_MS, not the server's whole timeout", async () => {
    const key = await newTenant();
    fake.tools["/hang"] = [{ name: "echo", description: "echo", inputSchema: obj }];
    const s = await api(
      "POST",
      "/v1/mcp-servers",
      { name: "hang", url: `${FAKE_MCP}/hang`, timeoutMs: 4_000 },
      { key },
    );
    expect(s.status).toBe(201);
    const conv = await createConversation(undefined, key);
    await send(conv, `@tool tool_activate {"name":"mcp__hang__echo"}`, key);
    const original = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      return request.method === "DELETE" && request.url.startsWith(FAKE_MCP)
        ? new Promise<Response>(() => {})
        : original(input, init);
    }) as typeof fetch;
    try {
      const started = Date.now();
      const r = results(await send(conv, `@tool mcp__hang__echo {"q":"x"}`, key))[0];
      expect(resultText(r)).toBe("ok");
      // The server's timeout is 4 s: a DELETE awaited to it made this call take 4.15 s.
      expect(Date.now() - started).toBeLessThan(SESSION_END_MS + 2_000);
    } finally {
      globalThis.fetch = original;
    }
  });
});

describe("an MCP server no longer in the conversation's scope", () => {
  it("is not called once moved to another project, nor once renamed", async () => {
    const key = await newTenant();
    const pa = (await api("POST", "/v1/projects", { name: "pa" }, { key })).json.id;
    const pb = (await api("POST", "/v1/projects", { name: "pb" }, { key })).json.id;
    const { id, conv } = await serverWithEcho("mover", pa, key);
    let calls = 0;
    fake.onCall = (_path, rpc) => (calls++, rpcResult(rpc.id, { content: [{ type: "text", text: "ran" }] }));
    await send(conv, `@tool tool_activate {"name":"mcp__mover__echo"}`, key);
    expect((await api("PATCH", `/v1/mcp-servers/${id}`, { projectId: pb }, { key })).json.projectId).toBe(pb);
    const moved = results(await send(conv, `@tool mcp__mover__echo {"q":"x"}`, key))[0];
    expect(moved).toMatchObject({ is_error: true, content: "the tool mcp__mover__echo is no longer registered" });
    expect(calls).toBe(0);

    const s = await serverWithEcho("stay", undefined, key);
    await send(s.conv, `@tool tool_activate {"name":"mcp__stay__echo"}`, key);
    await api("PATCH", `/v1/mcp-servers/${s.id}`, { name: "went" }, { key });
    const renamed = results(await send(s.conv, `@tool mcp__stay__echo {"q":"x"}`, key))[0];
    expect(renamed).toMatchObject({ is_error: true, content: "the tool mcp__stay__echo is no longer registered" });
    expect(calls).toBe(0);
  });
});
