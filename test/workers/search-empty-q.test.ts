// An empty (or blank) `q` is a 400 naming the field once, as every other refusal names its field.
import { describe, expect, it } from "vitest";
import { api } from "./helpers";

describe("GET /v1/search with no words", () => {
  it.each(["", "%20%20"])("q=%s is a 400 'q: required'", async (q) => {
    const r = await api("GET", `/v1/search?q=${q}` as "/v1/search");
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toBe("q: required");
  });
});
