// Starting a turn on a conversation's Durable Object and answering it over HTTP (SSE or JSON).
// Shared by the conversation, channel and automation paths so all three behave the same.
import type { Context } from "hono";
import type { TurnEvent } from "../../core/events";
import type { ContentBlock } from "../../core/types";
import { channelObjectName } from "../../durable-objects/channel-do";
import type { ConversationRef } from "../../durable-objects/conversation-head";
import { collectTurn, ndjsonEvents, sseResponse, turnJson } from "./turn-response";
import type { AppEnv } from "./types";

export async function startTurn(env: Env, ref: ConversationRef, content: ContentBlock[]): Promise<ReadableStream<TurnEvent> | null> {
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(ref.conversationId));
  const stream = await stub.send(ref, { content });
  return stream ? stream.pipeThrough(ndjsonEvents()) : null;
}

/**
 * A turn on a channel's current conversation; when that conversation was deleted, the channel
 * rotates to a new one and the turn runs there.
 */
export async function startChannelTurn(env: Env, tenantId: string, name: string, content: ContentBlock[]): Promise<{ conversationId: string; events: ReadableStream<TurnEvent> | null }> {
  const channel = env.CHANNEL.get(env.CHANNEL.idFromName(channelObjectName(tenantId, name)));
  let { conversationId } = await channel.resolve(tenantId, name);
  let events = await startTurn(env, { tenantId, conversationId }, content);
  if (!events) {
    ({ conversationId } = await channel.resolve(tenantId, name, Date.now(), conversationId));
    events = await startTurn(env, { tenantId, conversationId }, content);
  }
  return { conversationId, events };
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
