// The typed client's request() against the real chat worker with a binary answer: an attachment's
// content comes back byte for byte (`bytes`), not as text decoded from UTF-8.
import { describe, expect, it } from "vitest";
import { createClient } from "../../client";
import { createConversation, DEV_KEY, worker } from "./helpers";

const client = createClient({
  baseUrl: "http://chat.test",
  key: DEV_KEY,
  fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
    worker().fetch(new Request(String(input), init))) as typeof fetch,
});

/** A 3×2 PNG: its signature (0x89 "PNG" …) is not valid UTF-8. */
const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAYAAACddGYaAAAAEklEQVR42mP8z8BQz0AEYBxVSF8AAD0yBgHqf1HnAAAAAElFTkSuQmCC"),
  (ch) => ch.charCodeAt(0),
);

describe("client.request() with a binary answer", () => {
  it("gives an uploaded PNG's content byte for byte, and JSON answers their text and bytes alike", async () => {
    const id = await createConversation();
    const up = await client.request("POST /v1/conversations/{id}/attachments", {
      path: { id },
      query: { name: "dot.png" },
      body: PNG,
      headers: { "content-type": "image/png" },
    });
    expect(up.status, up.text).toBe(201);
    expect(new TextDecoder().decode(up.bytes)).toBe(up.text);
    const r = await client.request("GET /v1/conversations/{id}/attachments/{attachmentId}/content", {
      path: { id, attachmentId: up.data.id },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("content-type")).toContain("image/png");
    expect(r.bytes).toBeInstanceOf(Uint8Array);
    expect(Array.from(r.bytes)).toEqual(Array.from(PNG));
  });
});
