// A server's tool list is read only as far as one server's stored list may go
// (MAX_STORED_TOOLS_BYTES): a server whose pages each hold a huge tool, with a new cursor every
// time, is not read page after page into the worker's (or the conversation object's) memory.
import { describe, expect, it } from "vitest";
import { MAX_STORED_TOOLS_BYTES } from "../../services/mcp/servers";
import { api, newTenant } from "./helpers";
import { FAKE_MCP, installFakeMcp, rpcResult } from "./mcp-fake-server";

const fake = installFakeMcp();

describe("an MCP tool list past the stored cap", () => {
  it("stops being read at the tool that would pass MAX_STORED_TOOLS_BYTES, keeps the tools before it, and says so", async () => {
    const key = await newTenant();
    const big = "x".repeat(1024 * 1024);
    fake.onList = (_path, rpc) => {
      const cursor = rpc.params?.cursor;
      const n = Number(typeof cursor === "string" ? cursor.slice(1) : 0);
      const tool = {
        name: `t${n}`,
        description: "d",
        inputSchema: { type: "object", properties: { a: { type: "string", description: big } } },
      };
      return rpcResult(rpc.id, { tools: [tool], nextCursor: `c${n + 1}` });
    };
    const r = await api("POST", "/v1/mcp-servers", { name: "biglist", url: `${FAKE_MCP}/biglist` }, { key });
    expect(r.status).toBe(201);
    const pages = fake.log.filter((l) => l.rpc === "tools/list").length;
    // 1 MiB a page: the list passes the cap on its second page, and no page is read after that.
    expect(pages).toBe(Math.floor(MAX_STORED_TOOLS_BYTES / (1024 * 1024)) + 1);
    // The tools read before the one that passed the cap are kept: the list as far as it fits.
    const fit = Math.floor(MAX_STORED_TOOLS_BYTES / (1024 * 1024));
    expect(r.json.tools.map((t: { mcpName: string }) => t.mcpName)).toEqual(
      Array.from({ length: fit }, (_, n) => `t${n}`),
    );
    expect(r.json.toolsError).toContain(`passed the ${MAX_STORED_TOOLS_BYTES} bytes one server's list may take`);
    expect(r.json.toolsError).toContain(`the tool list was read no further than page ${pages}`);
    expect(r.json.toolsError).toContain(`the ${fit} tool${fit === 1 ? " before that is" : "s before that are"} listed`);
  });
});
