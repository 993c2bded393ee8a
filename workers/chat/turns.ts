// Starting a turn on a conversation's Durable Object and answering it over HTTP (SSE or JSON).
// Shared by the conversation, channel and automation paths so all three behave the same.
import type { Context, MiddlewareHandler } from "hono";
import type { z } from "zod";
import { decodeEvents, type TurnEvent } from "../../core/events";
import { MODEL_NOT_CONFIGURED, modelProblem } from "../../core/model-provider";
import { withLocationHint, type LocationHint } from "../../core/location-hint";
import { type ClientToolSpec, registeredToolClash, takenToolNames } from "../../core/client-tools";
import { mcpServersOfName } from "../../core/mcp-names";
import { SERVER_TOOL_NAMES } from "../../core/tenant-tool-rules";
import { toContentBlocks, type turnBodySchema } from "../../core/turn-input";
import { toolRegistry } from "../../agent/tools";
import { CHANNEL_PROJECT_ID, type ChannelPlace, channelObjectName } from "../../durable-objects/channel-do";
import type { TurnAnswer, TurnInput } from "../../durable-objects/conversation/conversation-do";
import type { ConversationRef } from "../../services/record/conversation-head";
import { unknownAttachmentMessage, withAttachments } from "../../services/attachments/turn-notes";
import { carriableMcpName } from "../../services/mcp/listing";
import { cachedTools, mcpServersNamedInScope } from "../../services/mcp/servers";
import { registeredNamesInScope } from "../../services/tools/tool-store";
import { keyForHash } from "../../services/keys/auth";
import { UnstartedTurn } from "../../durable-objects/rate-limiter-client";
import { ApiError, badRequest, unauthorized } from "./errors";
import { acceptsNamed } from "./media-type";
import { wroteElsewhere } from "./d1-session";
import { collectTurn, sseResponse, turnJson } from "./turn-response";
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

/** The turn a body asks for; an attachment id that is not the tenant's is a 400 before anything runs. */
export async function turnInput(env: Env, tenantId: string, body: z.infer<typeof turnBodySchema>): Promise<TurnInput> {
  const clash = takenToolNames(body.tools, [...toolRegistry.names(), ...SERVER_TOOL_NAMES]);
  if (clash) throw badRequest(clash);
  const turn = await withAttachments({
    db: env.DB,
    tenantId,
    ids: body.attachments,
    content: toContentBlocks(body.content),
  });
  if (turn.kind === "unknown") throw badRequest(unknownAttachmentMessage(turn.id));
  return { content: turn.content, activate: turn.activate, ...(body.tools ? { tools: body.tools } : {}) };
}

/** A regenerate's turn: no content (the runner saves the last prompt's again); its client tools checked as any turn's. */
export async function regenerateInput(tools: z.infer<typeof turnBodySchema>["tools"]): Promise<TurnInput> {
  const clash = takenToolNames(tools, [...toolRegistry.names(), ...SERVER_TOOL_NAMES]);
  if (clash) throw badRequest(clash);
  return { content: [], regenerate: true, ...(tools ? { tools } : {}) };
}

/**
 * A turn's client tools that redefine the tenant's own tools in the scope its conversation has
 * (registered HTTP and client tools, MCP servers' cached tools) are a 400, as the conversation
 * object would answer, asked before a caller resolves anything. One D1 query for a turn with
 * client tools (a second only for a name shaped as an MCP tool's); none without.
 */
export async function refuseRegisteredClash(
  env: Env,
  turn: { tenantId: string; projectId: string | null; tools: readonly ClientToolSpec[] | undefined },
): Promise<void> {
  const { tenantId, projectId, tools = [] } = turn;
  if (!tools.length) return;
  const names = tools.map((t) => t.name);
  const serverNames = [...new Set(names.flatMap(mcpServersOfName))];
  const [registered, servers] = await Promise.all([
    registeredNamesInScope(env.DB, { tenantId, projectId, names }),
    mcpServersNamedInScope(env.DB, { tenantId, projectId, names: serverNames }),
  ]);
  // As the object's mcp source offers them (agent/tools/mcp-tools.ts): a name no request could carry is not one.
  for (const s of servers) for (const t of cachedTools(s)) if (carriableMcpName(t.mcpName)) registered.add(t.name);
  const clash = registeredToolClash(tools, registered);
  if (clash) throw badRequest(clash);
}

/**
 * A turn request's answer: its events (`replayed`: the first outcome of an idempotency key answered
 * again, no turn ran), or `missing` when the conversation is not there.
 */
export type StartedTurn =
  | { kind: "started"; events: ReadableStream<TurnEvent>; replayed: boolean }
  | { kind: "missing" };

/**
 * The conversation object's answer to a turn request as events: a refusal is thrown as its API
 * error (409/422/400), and the one place the object's NDJSON is decoded for a route.
 */
export function turnEvents(answer: TurnAnswer): StartedTurn {
  switch (answer.kind) {
    case "missing":
      return answer;
    case "refused": {
      const { status, type, message } = answer.refusal;
      // Only a key still in flight clears within a second; a paused turn waits for its client.
      throw new ApiError(status, type, message, type === "idempotency_in_progress" ? { "retry-after": "1" } : {});
    }
    case "replay": {
      const { events } = answer;
      return {
        kind: "started",
        events: new ReadableStream<TurnEvent>({ start: (c) => (events.forEach((e) => c.enqueue(e)), c.close()) }),
        replayed: true,
      };
    }
    case "stream":
      return { kind: "started", events: answer.ndjson.pipeThrough(decodeEvents()), replayed: false };
  }
}

/** A turn that may carry an idempotency key: a used key answers 409/422 or replays, never runs twice. */
export async function startTurn(env: Env, ref: ConversationRef, input: TurnInput): Promise<StartedTurn> {
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(ref.conversationId));
  return turnEvents(await stub.send(ref, input));
}

/** The channel's conversation for the next message; a 400 naming why none could be started there. */
export function placed(place: ChannelPlace): string {
  if ("refused" in place) throw badRequest(place.refused);
  return place.conversationId;
}

/**
 * A turn on a channel's current conversation; when that conversation was deleted, the channel
 * rotates to a new one and the turn runs there.
 */
export async function startChannelTurn(
  env: Env,
  turn: {
    tenantId: string;
    name: string;
    input: TurnInput;
    locationHint?: LocationHint | null;
    /** Told where the channel's D1 writes reached, after a resolve that wrote (a create or rotation). */
    wrote?: (bookmark: string) => void;
  },
): Promise<{ conversationId: string; started: StartedTurn }> {
  const { tenantId, name, input, locationHint = null, wrote } = turn;
  const resolved = (place: ChannelPlace) => {
    if ("bookmark" in place && place.bookmark) wrote?.(place.bookmark);
    return placed(place);
  };
  // The hint places the channel's object (on its first get only) and a conversation it rotates to.
  const channel = env.CHANNEL.get(
    env.CHANNEL.idFromName(channelObjectName(tenantId, name)),
    withLocationHint(locationHint),
  );
  // Before the channel resolves: a refused turn neither creates nor rotates its conversation.
  await refuseRegisteredClash(env, { tenantId, projectId: CHANNEL_PROJECT_ID, tools: input.tools });
  // The channel's clock moves only for a turn that started (not a refused one, nor a replay): the
  // resolve holds the conversation meanwhile, and the touch moves the clock or lets the hold go.
  const run = async (at: { now: number; gone?: string }) => {
    const place = await channel.resolve({ tenantId, name, now: at.now, gone: at.gone, locationHint, mark: false });
    const conversationId = resolved(place);
    const hold = "hold" in place ? place.hold : undefined;
    // Failed, the answer stays the turn's: the hold lapses by itself, and a clock left behind leaves
    // the rotation to the conversation's own activity (a turn that started is some).
    const touch = (ran: boolean) =>
      channel
        .touch({ tenantId, name, conversationId, now: at.now, ran, hold })
        .catch((err: unknown) => console.error("channel: its activity was not marked", err));
    const started = await startTurn(env, { tenantId, conversationId }, input).catch(async (err: unknown) => {
      await touch(false);
      throw err;
    });
    await touch(started.kind === "started" && !started.replayed);
    return { conversationId, started };
  };
  const first = await run({ now: Date.now() });
  if (first.started.kind !== "missing") return first;
  return run({ now: Date.now(), gone: first.conversationId });
}

const KEY_GONE_MESSAGE = "the API key of this request is revoked or expired";

/**
 * The events, noting on the context when the turn starts running (not a replayed first outcome):
 * a turn that ran keeps its turn token even when it ends in a 4xx, e.g. its conversation deleted
 * under it after its model calls were billed; and, once they end, whether the turn stopped before
 * its model loop with nothing saved and nothing spent, which gives its token back whether it is
 * answered as JSON or as SSE (rate-limit.ts). Pulled one event per read, as the answer reads them;
 * events left unread (a client gone, a revoked key) never count as such a turn.
 */
function watchingTurn(c: Context<AppEnv>, events: ReadableStream<TurnEvent>): ReadableStream<TurnEvent> {
  const reader = events.getReader();
  const turn = new UnstartedTurn();
  let settle!: (unstarted: boolean) => void;
  c.set("turnUnstarted", new Promise<boolean>((resolve) => (settle = resolve)));
  return new ReadableStream<TurnEvent>(
    {
      async pull(out) {
        const next = await reader.read().catch((err: unknown) => {
          settle(false);
          throw err;
        });
        if (next.done) {
          settle(turn.unstarted);
          return out.close();
        }
        turn.see(next.value);
        if (next.value.type === "turn_start" && !next.value.replayed) c.set("turnRan", true);
        out.enqueue(next.value);
      },
      cancel(reason) {
        settle(false);
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** A started turn's events answered as SSE (on request) or as one JSON body. */
export async function respondTurn(
  c: Context<AppEnv>,
  turn: { conversationId: string; events: ReadableStream<TurnEvent>; replayed?: boolean },
): Promise<Response> {
  const { conversationId, events, replayed = false } = turn;
  const { keyHash, tenantId } = { keyHash: c.get("keyHash"), tenantId: c.get("tenantId") };
  // Read at the primary (the bare binding), as the request's own key lookup was, not in its session.
  const keyActive = keyHash
    ? async () => (await keyForHash(c.get("primaryEnv"), keyHash))?.tenantId === tenantId
    : undefined;
  let res: Response;
  if (acceptsNamed(c.req.header("accept"), "text/event-stream")) {
    res = sseResponse(watchingTurn(c, events), { keyActive });
    res.headers.set("x-conversation-id", conversationId);
  } else {
    // Only a JSON answer can end in a 4xx: an SSE stream is a 200 once it starts.
    const turn = await collectTurn(watchingTurn(c, events));
    // The turn's note writes, made by its object outside the request's session: the answer's
    // x-d1-bookmark covers them, a 401 below included (d1-session.ts).
    if (turn.d1Bookmark) wroteElsewhere(c, turn.d1Bookmark);
    // A key revoked (or expired) while the turn ran gets none of it, as its SSE stream would not;
    // the turn is done and saved in the conversation either way. A lookup that fails does not
    // withhold the answer (as on SSE): the auth cache's bound still holds for the next request.
    if (keyActive && !(await keyActive().catch(() => true))) throw unauthorized(KEY_GONE_MESSAGE);
    res = turnJson(conversationId, turn, Date.now() - c.get("requestStart"));
  }
  if (replayed) res.headers.set("idempotent-replayed", "true");
  return res;
}
