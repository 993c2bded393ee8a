// Types of recorded.mjs for the tests that import it.
export interface RecordableEmbedder {
  model: string;
  dimensions: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}
export declare function recordEmbeddings(
  embedder: RecordableEmbedder,
  texts: readonly string[],
  dir: string,
  options?: { batch?: number; progress?: (done: number, all: number) => void },
): Promise<{ model: string; dimensions: number; count: number }>;
export declare function recordedEmbedder(dir: string): RecordableEmbedder;
