// A body nested deeper than a recursive walk can follow is answered, never thrown: a throw reaches
// the SDK as a retried "Connection error.". A lone surrogate is found at any depth.
import { describe, expect, it } from "vitest";
import { handleMessagesRequest } from "../../core/offline-model";

const DEC_3 = Date.UTC(2026, 11, 3, 12);
const SLOW = 60_000;

/** A schema `depth` objects deep around `leaf`, as JSON text (JSON.stringify itself recurses). */
const nested = (depth: number, leaf: string): string =>
  `${'{"type":"object","properties":{"x":'.repeat(depth)}${leaf}${"}}".repeat(depth)}`;
const send = (body: string) =>
  handleMessagesRequest(new Request("https://offline-model.invalid/v1/messages", { method: "POST", body }), {
    now: () => DEC_3,
  });
const request = (schema: string) =>
  `{"model":"claude-sonnet-5-5","max_tokens":1024,"messages":[{"role":"user","content":"Hello."}],"output_config":{"format":{"type":"json_schema","schema":${schema}}}}`;

describe("a deeply nested body", () => {
  it("is answered with a 400, not thrown", { timeout: SLOW }, async () => {
    for (const depth of [5_000, 20_000]) {
      const res = await send(request(nested(depth, '{"type":"string"}')));
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
    }
  });

  it("has a lone surrogate found at any depth", { timeout: SLOW }, async () => {
    const res = await send(request(nested(3_000, '{"type":"string","description":"\\ud83d"}')));
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/no low surrogate/);
  });
});
