export declare function sifEmbedder(options?: { a?: number }): {
  model: string;
  dimensions: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
};
