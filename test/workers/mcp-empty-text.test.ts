// An MCP result with no readable text (an empty text block, a text block whose text is null or
// missing) is the blank-result rule's "(the tool returned no text)", never "(image)": that word is
// only for a result that carries an image.
import { describe, expect, it } from "vitest";
import { EMPTY_RESULT } from "../../core/blank-text";
import { resultText, toolResults } from "../blocks";
import { api, createConversation, newTenant, send, turnMessages } from "./helpers";
import { FAKE_MCP, installFakeMcp, rpcResult } from "./mcp-fake-server";

const fake = installFakeMcp();
const obj = { type: "object", properties: { q: { type: "string" } } };

/** A new tenant with the server `name` offering `echo`, its one call answering `content`; the result. */
async function callWith(name: string, content: unknown[]) {
  const key = await newTenant();
  fake.tools[`/${name}`] = [{ name: "echo", description: "echo", inputSchema: obj }];
  const s = await api("POST", "/v1/mcp-servers", { name, url: `${FAKE_MCP}/${name}` }, { key });
  expect(s.status).toBe(201);
  const conv = await createConversation(undefined, key);
  fake.onCall = (_p, rpc) => rpcResult(rpc.id, { content });
  const tool = `mcp__${name}__echo`;
  const t = await send(conv, `@tool tool_activate {"name":"${tool}"}\n@tool ${tool} {"q":"x"}`, key);
  return toolResults(turnMessages(t))[1];
}

describe("an MCP result without text or image", () => {
  for (const [label, content] of [
    ["one empty text block", [{ type: "text", text: "" }]],
    ["a text block whose text is null", [{ type: "text", text: null }]],
    ["a text block with no text", [{ type: "text" }]],
    [
      "two empty text blocks",
      [
        { type: "text", text: "" },
        { type: "text", text: "" },
      ],
    ],
  ] as const) {
    it(`${label} is told as no text, not as an image`, async () => {
      const r = await callWith("emptytext", [...content]);
      expect(r.is_error).toBeFalsy();
      expect(resultText(r)).toBe(EMPTY_RESULT);
    });
  }
});
