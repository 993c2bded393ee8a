// Types of workers-ai-rest.mjs for the tests that import it.
export declare function workersAiRestEmbedder(options: {
  accountId: string | undefined;
  token: string | undefined;
  model?: string;
  dimensions?: number;
  fetch?: (url: string, init: { method: string; headers: Record<string, string>; body: string }) => Promise<Response>;
  sleep?: (ms: number) => Promise<void>;
}): { model: string; dimensions: number; embed(texts: readonly string[]): Promise<Float32Array[]> };
