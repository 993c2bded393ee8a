// A redirect whose Location is no URL is a refused redirect, not a network error: the call is
// not retried (docs/api-notes.md "HTTP tools": retries are for network errors, 429 and 5xx).
import { inject, expect, it } from "vitest";
import { api, createConversation, newTenant, send, turnMessages } from "./helpers";
import { toolResults } from "../blocks";

const server = inject("httpToolServer");

it("refuses a redirect to something that is not a URL once, without retrying it", async () => {
  const key = await newTenant();
  const r = await api(
    "POST",
    "/v1/tools",
    {
      kind: "http",
      name: "bad_loc",
      description: "Bad redirect.",
      inputSchema: { type: "object", properties: {} },
      endpoint: `${server}/redirect?key=cfloc&code=302&to=${encodeURIComponent("http://[oops/")}`,
      idempotent: true,
      retries: 2,
    },
    { key },
  );
  expect(r.status).toBe(201);
  const id = await createConversation(undefined, key);
  await send(id, `@tool tool_activate {"name":"bad_loc"}`, key);
  const call = await send(id, `@tool bad_loc {}`, key);
  expect(call.status).toBe(200);
  const [result] = toolResults(turnMessages(call));
  expect(result).toMatchObject({
    is_error: true,
    content: "bad_loc: redirect to a refused URL: not a valid URL",
  });
  expect(await (await fetch(`${server}/_seen?key=cfloc`)).json()).toHaveLength(1);
});
