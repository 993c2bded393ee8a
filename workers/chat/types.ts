import type { Hono } from "hono";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    /** The request's id, set by the first middleware (request-id.ts): every answer's `request-id` header. */
    requestId?: string;
    tenantId: string;
    requestStart: number;
    ticketConversation?: string;
    keyHash?: string;
    keyId?: string;
    /**
     * The bindings as the worker was given them, set by d1-session.ts before it puts the request's
     * session in `DB`: their bare `DB` reads at the primary, as a key's lookup must (a turn's key re-checks).
     */
    primaryEnv: Env;
    /** Set once a turn route's turn started running (its `turn_start`): its turn token stays spent whatever it answers. */
    turnRan?: boolean;
    /**
     * Set once a turn route answers a started turn's events: resolves as they end (at once for a
     * JSON answer, after the stream for SSE), true when the turn stopped before its model loop with
     * nothing saved and nothing spent (rate-limiter-client.ts UnstartedTurn): its turn tokens go back.
     */
    turnUnstarted?: Promise<boolean>;
  };
};
export type App = Hono<AppEnv>;
