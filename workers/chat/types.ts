import type { Hono } from "hono";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    tenantId: string;
    requestStart: number;
    ticketConversation?: string;
    keyHash?: string;
    keyId?: string;
    /** Set once a turn route's turn started running (its `turn_start`): its turn token stays spent whatever it answers. */
    turnRan?: boolean;
  };
};
export type App = Hono<AppEnv>;
