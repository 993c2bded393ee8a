// Values the workers project's globalSetup hands to the tests (vitest provide/inject).
declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the HTTP tool test server (http-tool-server.mjs) on 127.0.0.1. */
    httpToolServer: string;
  }
}
export {};
