// The OpenAPI document's request-id header says what a client quotes when a call failed: the
// header. Error bodies keep their one shape (`{error: {type, message}}`, test/workers/request-id.test.ts),
// so the description promises no `request_id` in them.
import { expect, it } from "vitest";
import committed from "../../client/openapi.gen.json";
import { api } from "./helpers";

const doc = committed as unknown as { components: { headers: Record<string, { description?: string }> } };

it("the RequestId header's description promises no body field an error body lacks (a 401's)", async () => {
  const denied = await api("GET", "/v1/search?q=a", undefined, { key: "nope" });
  expect(denied.status).toBe(401);
  const id = denied.headers.get("request-id");
  expect(id).toBeTruthy();
  expect(denied.text).not.toContain("request_id");
  expect(denied.text).not.toContain(String(id));
  const description = doc.components.headers.RequestId.description ?? "";
  expect(description).not.toContain("request_id");
  expect(description).toMatch(/quote/);
});
