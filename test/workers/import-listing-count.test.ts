// An import's listing row goes in with the transcript's message count: a listing read right after
// the import (at its bookmark) shows the messages, not 0 until the object's outbox refreshes it.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";

describe("an imported conversation's listing row", () => {
  it("counts the imported messages as soon as the import answers", async () => {
    const key = await newTenant();
    const made = await api(
      "POST",
      "/v1/conversations/import",
      {
        messages: [
          { role: "user", content: "hello" },
          { role: "assistant", content: "hi" },
          { role: "user", content: "again" },
          { role: "assistant", content: "yes" },
        ],
      },
      { key },
    );
    expect(made.status, made.text).toBe(201);
    expect(made.json.messageCount).toBe(4);
    const bookmark = made.headers.get("x-d1-bookmark");
    expect(bookmark).toBeTruthy();
    const listed = await api("GET", "/v1/conversations?limit=5", undefined, {
      key,
      headers: { "x-d1-bookmark": bookmark ?? "" },
    });
    expect(listed.status).toBe(200);
    const row = listed.json.data.find((c) => c.id === made.json.id);
    expect(row?.messageCount).toBe(4);
  });
});
