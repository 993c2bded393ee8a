// The cortex's tenant-neutral term counts (term-stats.ts): data/cortex/background-terms.txt, built
// by `npm run build:background-terms` and bundled as a Text module (wrangler's default rule for
// *.txt; the unit tests' vitest config loads it the same way). Its metadata ("@name value" lines)
// is read when this module loads; the 13,000 counts only on first use.
import TEXT from "../../data/cortex/background-terms.txt";

/** The data file's text: comment (#) and metadata (@) lines, then "term count" lines sorted by term. */
export const BACKGROUND_TERMS: string = TEXT;

function metadata(name: string): number {
  const value = Number(new RegExp(`^@${name} (\\d+)$`, "m").exec(BACKGROUND_TERMS)?.[1]);
  if (!Number.isSafeInteger(value)) throw new Error(`background-terms.txt has no @${name}`);
  return value;
}

/** How many chat turns were counted. */
export const BACKGROUND_DOCUMENTS = metadata("documents");
export const BACKGROUND_MIN_DOCUMENT_FREQUENCY = metadata("min-df");
/** bench:recall-public's first questions whose sessions are not counted here: its figures on them are held out. */
export const BACKGROUND_HELD_OUT_QUESTIONS = metadata("held-out");

/** term -> how many of the turns hold it, from the data file's text. */
export function parseBackgroundCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.startsWith("@")) continue;
    const space = line.indexOf(" ");
    if (space > 0) counts.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return counts;
}
