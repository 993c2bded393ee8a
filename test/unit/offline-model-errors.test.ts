// Offline model errors: over-window prompts, bad requests and unknown routes answer with
// Anthropic's error shapes, as the SDK's error classes.
import Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { countRequestTokens } from "../../core/tokens";
import { ask, makeClient, rawPost, rejection } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

interface ErrorBody {
  type: string;
  error: { type: string; message: string };
}

async function errorBody(response: Response): Promise<ErrorBody> {
  return (await response.json()) as ErrorBody;
}

describe("errors", () => {
  const longText = "The ledger reconciliation notes continue here with more words. ".repeat(150);

  it("rejects prompts over the window with the exact message as Anthropic.BadRequestError", async () => {
    const params = ask(longText, { model: "offline-1k" });
    const error = await rejection(makeClient().messages.create(params));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: `prompt is too long: ${countRequestTokens(params)} tokens > 1000 maximum`,
      },
    });
  });

  it("uses the model's window from the catalog and honours per-model window overrides", async () => {
    const params = ask(longText, { model: "claude-sonnet-5-5" });
    await expect(makeClient().messages.create(params)).resolves.toMatchObject({ type: "message" });
    const error = await rejection(makeClient({ windows: { "claude-sonnet-5-5": 500 } }).messages.create(params));
    // Claude Sonnet 5.5 counts about 30% more tokens than the cl100k stand-in (its tokenizerRatio).
    expect((error.error as { error: { message: string } }).error.message).toMatch(
      /^prompt is too long: \d+ tokens > 500 maximum$/,
    );
  });

  it.each([
    [429, Anthropic.RateLimitError, "rate_limit_error"],
    [529, Anthropic.OverloadedError, "overloaded_error"],
    [500, Anthropic.InternalServerError, "api_error"],
    [400, Anthropic.BadRequestError, "invalid_request_error"],
  ] as const)("@model-error %i surfaces as the SDK's error class", async (status, errorClass, type) => {
    const error = await rejection(makeClient().messages.create(ask(`Hello.\n@model-error ${status}`)));
    expect(error).toBeInstanceOf(errorClass);
    expect(error.status).toBe(status);
    expect(error.error).toMatchObject({ type: "error", error: { type } });
    if (status === 500) expect(error).not.toBeInstanceOf(Anthropic.OverloadedError);
    expect(error.headers?.get("retry-after")).toBe(status === 429 ? "1" : null);
  });

  it("names the missing field, and answers 404 off the messages route", async () => {
    const missing = await rawPost({ model: "offline-200k", messages: [{ role: "user", content: "hi" }] });
    expect(missing.status).toBe(400);
    expect(await errorBody(missing)).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringMatching(/^max_tokens/) },
    });
    const empty = await rawPost({ model: "offline-200k", max_tokens: 5, messages: [] });
    expect((await errorBody(empty)).error.message).toMatch(/^messages/);
    const notFound = await rawPost(ask("hi"), "/v1/complete");
    expect(notFound.status).toBe(404);
    expect((await errorBody(notFound)).error.type).toBe("not_found_error");
  });
});
