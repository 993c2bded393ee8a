// The platform against an MCP server it did not write: the Model Context Protocol project's
// reference "everything" server (@modelcontextprotocol/server-everything, MIT License per its
// README), run in its streamableHttp mode by test/mcp-servers/global-setup.ts. Its tools are
// listed, called (text, image, resource links, an embedded resource) and their results replayed
// and stubbed like any other tool's.
import { beforeAll, describe, expect, inject, it } from "vitest";
import { api, createConversation, newTenant, send, transcript, turnMessages } from "./helpers";
import { blocksOf, toolResults, ofType } from "../blocks";
import type { ContentBlock, ToolResultBlock } from "../../core/types";

const results = (turn: { text: string }) => toolResults(turnMessages(turn));
const textOf = (r: ToolResultBlock) =>
  typeof r.content === "string"
    ? r.content
    : r.content.map((b) => (b.type === "text" ? b.text : `<${b.type}>`)).join("\n");

let key: string;
beforeAll(async () => {
  key = await newTenant();
});

describe("the reference 'everything' MCP server", () => {
  it("is listed, called and its results replayed, then stubbed once stale", async () => {
    const reg = await api(
      "POST",
      "/v1/mcp-servers",
      { name: "everything", url: `http://127.0.0.1:${inject("mcpEverythingPort")}/mcp` },
      { key },
    );
    expect(reg.status).toBe(201);
    expect(reg.json.transport).toBe("streamable-http");
    const names = reg.json.tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "mcp__everything__echo",
        "mcp__everything__get-tiny-image",
        "mcp__everything__get-resource-links",
        "mcp__everything__get-resource-reference",
        "mcp__everything__get-sum",
      ]),
    );

    const id = await createConversation({ stubBatchChars: 0 }, key);
    const found = results(await send(id, `@tool tool_search {"query":"echo back the input"}`, key))[0];
    expect(found.content).toContain("mcp__everything__echo");
    const use = ["echo", "get-tiny-image", "get-resource-links", "get-resource-reference", "get-sum"];
    await send(id, use.map((n) => `@tool tool_activate {"name":"mcp__everything__${n}"}`).join("\n"), key);
    const long = "everything-echo ".repeat(400);
    const turn = await send(
      id,
      [
        `@tool mcp__everything__echo ${JSON.stringify({ message: long })}`,
        `@tool mcp__everything__get-tiny-image {}`,
        `@tool mcp__everything__get-resource-links {"count":2}`,
        `@tool mcp__everything__get-resource-reference {"resourceType":"Text","resourceId":2}`,
        `@tool mcp__everything__get-sum {"a":2,"b":3}`,
      ].join("\n"),
      key,
    );
    const [echo, image, links, reference, sum] = results(turn);
    expect(echo.content).toBe(`Echo: ${long}`);
    expect((image.content as ContentBlock[]).map((b) => b.type)).toContain("image");
    expect(blocksOf(image.content as ContentBlock[], "image")[0].source).toMatchObject({ media_type: "image/png" });
    expect(textOf(links)).toMatch(/\[resource link: Text Resource 2 <demo:\/\/resource\/dynamic\/text\/2> text\/plain/);
    expect(textOf(reference)).toMatch(/\[resource <demo:\/\/resource\/[^>]+2[^>]*> text\/plain\]\n./);
    expect(textOf(sum)).toContain("5");
    for (const r of [echo, image, links, reference, sum]) expect(r.is_error).toBeUndefined();

    // Replayed whole while fresh; after two more exchanges the large echo is a stub naming its recovery call.
    const fresh = (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json;
    expect(JSON.stringify(fresh.messages)).toContain(long.trim());
    await send(id, "small talk one", key);
    await send(id, "small talk two", key);
    const stale = (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json;
    expect(stale.estimate.stubbedResults).toBeGreaterThanOrEqual(1);
    const stub = stale.messages
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .find((b) => b.type === "tool_result" && b.tool_use_id === echo.tool_use_id);
    expect(textOf(ofType(stub as ContentBlock | undefined, "tool_result"))).not.toContain(long.trim());
    expect(textOf(ofType(stub as ContentBlock | undefined, "tool_result"))).toMatch(/conversation_read/);
    // The transcript keeps it byte for byte.
    const stored = (await transcript(id, key))
      .flatMap((m) => m.content)
      .find((b) => b.type === "tool_result" && b.content === `Echo: ${long}`);
    expect(stored).toBeDefined();
  });
});
