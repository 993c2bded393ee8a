// An image block in an assistant message is refused at import (core/transcript/transcript-check.ts):
// the API refuses one there ("'image' blocks are not permitted within assistant turns",
// epam/ai-dial-adapter-bedrock#306), so the imported history would fail every later turn's replay.
// The 400 names the block, and no conversation is created.
import { expect, it } from "vitest";
import { api, importText, newTenant } from "./helpers";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const image = { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } };

it("refuses an assistant message holding an image block, naming it, and creates no conversation", {
  timeout: 60_000,
}, async () => {
  const key = await newTenant();
  const messages = [
    { role: "user", content: "Draw me a square." },
    { role: "assistant", content: [{ type: "text", text: "Here it is." }, image] },
    { role: "user", content: "Thanks." },
  ];
  const r = await importText(JSON.stringify({ messages }), key);
  expect(r.status, r.text).toBe(400);
  expect(r.json.error?.message).toMatch(/^messages\[1\]\.content\.1: an image block belongs in a user message/);
  const list = await api("GET", "/v1/conversations", undefined, { key });
  expect(list.status).toBe(200);
  expect(list.json.data).toEqual([]);
});

it("still takes the same image in a user message", { timeout: 60_000 }, async () => {
  const key = await newTenant();
  const messages = [
    { role: "user", content: [image, { type: "text", text: "What is this?" }] },
    { role: "assistant", content: "A pixel." },
  ];
  const r = await importText(JSON.stringify({ messages }), key);
  expect(r.status, r.text).toBe(201);
});
