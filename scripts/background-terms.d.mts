// Types of scripts/background-terms.mjs for the test that imports it.
export declare const BACKGROUND_TERMS_FILE: string;
export declare function backgroundTermsText(input: {
  documents: number;
  sessions: number;
  minDf: number;
  holdOut: number;
  counts: ReadonlyMap<string, number>;
}): string;
