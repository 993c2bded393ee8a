// A channel name starts with a letter or digit, then letters, digits and `. _ -`, at most 64 in
// all: an automation naming another is a 400 that says so; a channel route's malformed name is the
// same 404 as an unknown channel (like every malformed path id).
import { describe, expect, it } from "vitest";
import { postAutomation } from "./automation-helpers";
import { api, newTenant } from "./helpers";

describe("the channel name rule", () => {
  it("an automation's channel starting with . _ or - is a 400 naming the leading letter or digit", async () => {
    const key = await newTenant();
    for (const channel of ["_inbox", ".hidden", "-dash"]) {
      const r = await postAutomation(key, { channel });
      expect(r.status, r.text).toBe(400);
      expect(r.json.error?.message).toMatch(
        /^channel: a letter or digit first, then letters, digits and \. _ - only, at most 64/,
      );
    }
    expect((await postAutomation(key, { channel: "inbox_2.a-b" })).status).toBe(201);
  });

  it("a channel route's name starting with _ is the 404 of an unknown channel", async () => {
    const key = await newTenant();
    const r = await api("POST", "/v1/channels/_inbox/messages", { content: "hi" }, { key });
    expect(r.status, r.text).toBe(404);
    expect(r.json.error?.type).toBe("not_found");
  });
});
