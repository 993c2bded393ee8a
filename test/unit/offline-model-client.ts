// The offline model is exercised only through the real Anthropic SDK (or raw fetch for wire-level
// checks), so these tests also prove the SDK accepts it. This is the client and helpers they share.
import Anthropic from "@anthropic-ai/sdk";
import { createOfflineModelFetch, handleMessagesRequest, type OfflineModelOptions } from "../../core/offline-model";

export type Params = Anthropic.MessageCreateParamsNonStreaming;

const BASE_URL = "https://offline-model.invalid";

export function makeClient(options: OfflineModelOptions = {}): Anthropic {
  return new Anthropic({
    apiKey: "offline",
    baseURL: BASE_URL,
    fetch: createOfflineModelFetch(options),
    maxRetries: 0,
  });
}

export function ask(text: string, extra: Partial<Params> = {}): Params {
  return { model: "offline-200k", max_tokens: 4_096, messages: [{ role: "user", content: text }], ...extra };
}

export function textOf(message: Anthropic.Message): string {
  return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
}

export function toolUses(message: Anthropic.Message): Anthropic.ToolUseBlock[] {
  return message.content.filter((block): block is Anthropic.ToolUseBlock => block.type === "tool_use");
}

type APIError = InstanceType<typeof Anthropic.APIError>;

export async function rejection(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    return error as APIError;
  }
  throw new Error("expected the request to fail");
}

/** The date the API-rule fixtures are answered at: the catalog's deprecations and retirements as of then. */
export const FIXTURE_DAY = Date.UTC(2026, 11, 3, 12);

/** A one-line request to a current catalog model, for tests that change a field or two of it. */
export const HELLO = {
  model: "claude-sonnet-5-5",
  max_tokens: 1024,
  messages: [{ role: "user", content: "Hello." }],
};

/** A raw Messages request (`body` as sent, with these headers), answered as on FIXTURE_DAY. */
export function postOnFixtureDay(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return handleMessagesRequest(
    new Request(`${BASE_URL}/v1/messages`, { method: "POST", headers, body: JSON.stringify(body) }),
    { now: () => FIXTURE_DAY },
  );
}

/**
 * A one-line request to a current model with `body`'s fields laid over it, sent raw to `path`
 * (anthropic-beta: `beta`) and answered as on FIXTURE_DAY: its status and error message, if any.
 */
export async function fieldsOnFixtureDay(
  body: Record<string, unknown>,
  { beta, path = "/v1/messages" }: { beta?: string; path?: string } = {},
): Promise<{ status: number; message?: string }> {
  const response = await handleMessagesRequest(
    new Request(BASE_URL + path, {
      method: "POST",
      headers: beta ? { "anthropic-beta": beta } : {},
      body: JSON.stringify({
        model: HELLO.model,
        // count_tokens takes no max_tokens.
        ...(path === "/v1/messages" ? { max_tokens: HELLO.max_tokens } : {}),
        messages: HELLO.messages,
        ...body,
      }),
    }),
    { now: () => FIXTURE_DAY },
  );
  const json = (await response.json()) as { error?: { message: string } };
  return { status: response.status, message: json.error?.message };
}

export async function rawPost(body: unknown, path = "/v1/messages"): Promise<Response> {
  return handleMessagesRequest(new Request(BASE_URL + path, { method: "POST", body: JSON.stringify(body) }));
}

export const TOOLS: Anthropic.Tool[] = [
  {
    name: "read_file",
    description: "Read a file",
    input_schema: { type: "object", properties: { path: { type: "string" } } },
  },
];
