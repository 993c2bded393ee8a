// Blocks the real API refuses in an assistant message: an image or a search_result there is a 400
// ("messages.1.content: 'image' blocks are not permitted within assistant turns.", as reported in
// epam/ai-dial-adapter-bedrock#306). And a base64 PDF whose data is base64 only in its first
// characters is not a valid PDF (anthropics/claude-code#5174).
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { HELLO, postOnFixtureDay } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

const SLOW = 30_000;
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

async function errorOf(body: Record<string, unknown>): Promise<{ status: number; type: string; message: string }> {
  const response = await postOnFixtureDay({ ...HELLO, ...body });
  const json = (await response.json()) as { error?: { type: string; message: string } };
  return { status: response.status, type: json.error?.type ?? "", message: json.error?.message ?? "" };
}

const withAssistant = (block: Record<string, unknown>) => ({
  messages: [
    { role: "user", content: "Hi." },
    { role: "assistant", content: [{ type: "text", text: "Here:" }, block] },
    { role: "user", content: "Go on." },
  ],
});

describe("offline model: blocks not permitted in assistant turns", () => {
  it(
    "refuses an image block in an assistant message",
    async () => {
      const image = { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } };
      expect(await errorOf(withAssistant(image))).toEqual({
        status: 400,
        type: "invalid_request_error",
        message: "messages.1.content: 'image' blocks are not permitted within assistant turns.",
      });
    },
    SLOW,
  );

  it(
    "refuses a search_result block in an assistant message",
    async () => {
      const result = {
        type: "search_result",
        source: "https://example.com/a",
        title: "A",
        content: [{ type: "text", text: "Opens at nine." }],
      };
      expect(await errorOf(withAssistant(result))).toEqual({
        status: 400,
        type: "invalid_request_error",
        message: "messages.1.content: 'search_result' blocks are not permitted within assistant turns.",
      });
    },
    SLOW,
  );

  it(
    "still takes the same image in a user message",
    async () => {
      const image = { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } };
      const response = await postOnFixtureDay({
        ...HELLO,
        messages: [{ role: "user", content: [image, { type: "text", text: "What is it?" }] }],
      });
      expect(response.status).toBe(200);
    },
    SLOW,
  );
});

describe("offline model: base64 PDF data", () => {
  const pdf = (data: string) => ({
    messages: [
      {
        role: "user",
        content: [
          { type: "document", source: { type: "base64", media_type: "application/pdf", data } },
          { type: "text", text: "When does it open?" },
        ],
      },
    ],
  });

  it(
    "refuses data that is base64 only in its first 8 characters",
    async () => {
      expect(await errorOf(pdf("JVBERi0xLjQK!!!!****"))).toEqual({
        status: 400,
        type: "invalid_request_error",
        message: "messages.0.content.0.document.source.base64.data: The PDF specified was not valid.",
      });
    },
    SLOW,
  );

  it(
    "takes whole, valid base64 starting with %PDF-",
    async () => {
      const response = await postOnFixtureDay({ ...HELLO, ...pdf("JVBERi0xLjQKJSVFT0YK") });
      expect(response.status).toBe(200);
    },
    SLOW,
  );
});
