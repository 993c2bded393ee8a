// Starting a turn on a conversation's Durable Object and answering it over HTTP (SSE or JSON).
// Shared by the conversation, channel and automation paths so all three behave the same.
import type { Context } from "hono";
import type { z } from "zod";
import type { TurnEvent } from "../../core/events";
import { toContentBlocks, type turnBodySchema } from "../../core/turn-input";
import type { ConversationRef } from "../../durable-objects/conversation-head";
import type { TurnInput } from "../../durable-objects/conversation-do";
import { resolveTurnAttachments, unknownAttachmentMessage } from "./attachments/turn-notes";
import { badRequest } from "./errors";
import { collectTurn, ndjsonEvents, sseResponse, turnJson } from "./turn-response";
import type { AppEnv } from "./types";

/** The turn a body asks for; an attachment id that is not the tenant's is a 400 before anything runs. */
export async function turnInput(env: Env, tenantId: string, body: z.infer<typeof turnBodySchema>): Promise<TurnInput> {
  const attached = await resolveTurnAttachments(env.DB, tenantId, body.attachments);
  if ("unknown" in attached) throw badRequest(unknownAttachmentMessage(attached.unknown));
  return { content: [...attached.notes, ...toContentBlocks(body.content)], activate: attached.tools };
}

export async function startTurn(env: Env, ref: ConversationRef, input: TurnInput): Promise<ReadableStream<TurnEvent> | null> {
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(ref.conversationId));
  const stream = await stub.send(ref, input);
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
