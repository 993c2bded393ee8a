import type { Hono } from "hono";

export type AppEnv = {
  Bindings: Env;
  Variables: { tenantId: string; requestStart: number; ticketConversation?: string; keyHash?: string; keyId?: string };
};
export type App = Hono<AppEnv>;
