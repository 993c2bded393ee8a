// ANTHROPIC_BASE_URL (e.g. a Cloudflare AI Gateway) is where both workers' model calls go: the
// conversation object and the summarizer build their client with createModelClient(env).
import { afterEach, describe, expect, it, vi } from "vitest";
import { createModelClient } from "../../core/model-client";
import { modelProblem } from "../../core/model-provider";

const GATEWAY = "https://gateway.ai.cloudflare.com/v1/acct123/chat-gw/anthropic";

afterEach(() => vi.unstubAllGlobals());

describe("ANTHROPIC_BASE_URL", () => {
  it("sends the SDK's requests to the configured base URL", async () => {
    const seen: string[] = [];
    vi.stubGlobal("fetch", async (input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(new Request(input, init).url);
      const body = {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "m",
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      };
      return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
    });
    const client = createModelClient(
      { ANTHROPIC_API_KEY: "sk-ant-x", ANTHROPIC_BASE_URL: ` ${GATEWAY} ` },
      { maxRetries: 0 },
    );
    expect(client.baseURL).toBe(GATEWAY);
    await client.messages.create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
    expect(seen).toEqual([`${GATEWAY}/v1/messages`]);
  });

  it("without the setting, talks to Anthropic's API", () => {
    expect(createModelClient({ ANTHROPIC_API_KEY: "sk-ant-x" }).baseURL).toBe("https://api.anthropic.com");
    expect(createModelClient({ ANTHROPIC_API_KEY: "sk-ant-x", ANTHROPIC_BASE_URL: "  " }).baseURL).toBe(
      "https://api.anthropic.com",
    );
  });

  it("refuses a base URL that is not an http(s) URL, by name", () => {
    for (const bad of ["gateway.ai.cloudflare.com/v1/a/b/anthropic", "ftp://example.com", "not a url"])
      expect(() => modelProblem({ ANTHROPIC_API_KEY: "sk-ant-x", ANTHROPIC_BASE_URL: bad })).toThrow(
        /ANTHROPIC_BASE_URL must be an http\(s\) URL/,
      );
  });
});
