// Types of index.mjs (the recall sets bench:recall-public knows) for the tests that import it.
import type { RecallSet } from "./shape.mjs";
export declare const LOADERS: Record<string, { loadSet(dir: string): RecallSet }>;
export declare const TUNING_SET: string;
export function setsIn(dir: string, only?: string): string[];
export function loadSet(dir: string, name: string): RecallSet;
