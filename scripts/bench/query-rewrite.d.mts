/** The question's key nouns, in order, each once (case folded); null when nothing but function words. */
export function keyNouns(question: string): string | null;
/** Reciprocal-rank fusion (k = 60) of rankings, each read to `depth` (default 5). */
export function fuse<T>(lists: readonly (readonly T[])[], depth?: number): T[];
