// Types of scripts/background-terms.mjs for the test that imports it.
export declare const BACKGROUND_TERMS_FILE: string;
export declare function backgroundTermsText(input: {
  documents: number;
  sessions: number;
  minDf: number;
  files: number;
  counts: ReadonlyMap<string, number>;
}): string;
export declare function corpusTurns(dir: string): { files: string[]; sessions: number; texts: string[] };
