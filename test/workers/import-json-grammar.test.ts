// A JSON import whose document JSON.parse refuses is refused whole (API.md Conventions: bad input is
// a 400 naming the problem, nothing half-written), wherever the fault sits around the messages: a
// stray comma or colon, text after the document, a bad escape in a field the import skips.
import { describe, expect, it } from "vitest";
import { api, importText, newTenant } from "./helpers";

describe("a malformed JSON import", () => {
  it("is a 400 naming malformed JSON, and no conversation is created", async () => {
    const key = await newTenant();
    const m = '{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}';
    const bodies = [
      `{"messages":[${m}]} "trailing junk"`,
      `{"messages":[${m}]} true`,
      `{"messages":[${m}],,,}`,
      `{"messages":[${m},]}`,
      `{"model" "x", "messages":[${m}]}`,
      `{"model":"a\\qb","messages":[${m}]}`,
      `{"messages":[${m}]:1}`,
    ];
    for (const body of bodies) {
      expect(() => JSON.parse(body)).toThrow();
      const r = await importText(body, key);
      expect(r.status, body).toBe(400);
      expect(r.json.error?.message, body).toMatch(/^body: malformed JSON \(/);
    }
    expect((await api("GET", "/v1/conversations", undefined, { key })).json.data).toHaveLength(0);
    expect((await importText(`{"model":"a\\u00e9b","messages":[${m}]}`, key)).status).toBe(201);
  });
});
