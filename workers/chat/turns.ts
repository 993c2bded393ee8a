// Starting a turn on a conversation's Durable Object and answering it over HTTP (SSE or JSON).
// Shared by the conversation, channel and automation paths so all three behave the same.
import type { Context, MiddlewareHandler } from "hono";
import type { TurnEvent } from "../../core/events";
import type { ContentBlock } from "../../core/types";
import { MODEL_NOT_CONFIGURED, modelProblem } from "../../core/model-provider";
import type { ConversationRef } from "../../durable-objects/conversation-head";
import { ApiError } from "./errors";
import { collectTurn, ndjsonEvents, sseResponse, turnJson } from "./turn-response";
import type { AppEnv } from "./types";

/**
 * On every turn route, before anything is resolved or saved: without a configured model the
 * request is a 503 naming the missing secret (SSE callers get it too, as no stream has started).
 */
export const requireModel: MiddlewareHandler<AppEnv> = async (c, next) => {
  const problem = modelProblem(c.env);
  if (problem) throw new ApiError(503, MODEL_NOT_CONFIGURED, problem);
  await next();
};

export async function startTurn(env: Env, ref: ConversationRef, content: ContentBlock[]): Promise<ReadableStream<TurnEvent> | null> {
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(ref.conversationId));
  const stream = await stub.send(ref, { content });
  return stream ? stream.pipeThrough(ndjsonEvents()) : null;
}

export async function respondTurn(c: Context<AppEnv>, conversationId: string, events: ReadableStream<TurnEvent>): Promise<Response> {
  if ((c.req.header("accept") ?? "").includes("text/event-stream")) {
    const res = sseResponse(events);
    res.headers.set("x-conversation-id", conversationId);
    return res;
  }
  const turn = await collectTurn(events);
  return turnJson(conversationId, turn, Date.now() - c.get("requestStart"));
}
