export declare const SENTENCE_ENCODER_MODEL: string;
export declare const SENTENCE_ENCODER_DIMENSIONS: number;
export declare function sentenceEncoder(): Promise<{
  model: string;
  dimensions: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}>;
