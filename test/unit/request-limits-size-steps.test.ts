// Past the body limit, the oldest images are left out in steps of IMAGE_STEP, as past the image
// count: one at a time, the left-out prefix (and the prompt cache from there on) would move on
// every new photo. The body limit is scaled down a hundredfold with the photos (the rule reads
// only bytes), so each request is 1% of its real size.
import { describe, expect, it } from "vitest";
import { fitRequestLimits, IMAGE_STEP, MAX_REQUEST_BYTES } from "../../core/request-limits";
import type { ContentBlock, ModelRequest, WireMessage } from "../../core/types";
import { b64, imageBlock, pngHead } from "./image-bytes";

const SCALE = 100;
const maxBytes = Math.floor(MAX_REQUEST_BYTES / SCALE);
/** A photo of 1200x900 whose base64 is `chars` long (at full scale, `chars` x SCALE). */
const photo = (chars: number) => b64(pngHead(1200, 900, Math.floor((chars * 3) / 4) - 33));

/** `n` turns, each a user photo; the last is the newest prompt. */
const request = (data: string, n: number): ModelRequest => ({
  model: "claude-sonnet-5-5",
  max_tokens: 1000,
  system: [{ type: "text", text: "You help." }],
  tools: [],
  messages: Array.from({ length: n }, (_, i): WireMessage[] => [
    { role: "user", content: [{ type: "text", text: `photo ${i}` }, imageBlock(data) as ContentBlock] },
    ...(i < n - 1 ? [{ role: "assistant" as const, content: [{ type: "text" as const, text: `seen ${i}` }] }] : []),
  ]).flat(),
});

/** Per turn from `from` to `to`: the request as fitted, and the first message it changed of the one before. */
function turns(data: string, from: number, to: number) {
  const out: { n: number; replaced: number; fits: boolean; bytes: number; firstDiff: number; lastBefore: number }[] =
    [];
  let before: string[] = [];
  for (let n = from; n <= to; n++) {
    const fitted = fitRequestLimits(request(data, n), 100, { maxBytes });
    const now = fitted.request.messages.map((m) => JSON.stringify(m));
    out.push({
      n,
      replaced: fitted.imagesReplaced,
      fits: fitted.fits,
      bytes: JSON.stringify(fitted.request).length,
      firstDiff: before.findIndex((m, i) => m !== now[i]),
      lastBefore: before.length - 1,
    });
    before = now;
  }
  return out;
}

describe("the body-size rule's steps", () => {
  it("with ~4.4 MB photos (7 fit), the prefix moves once every IMAGE_STEP turns, and every request fits", () => {
    const t = turns(photo(44_000), 6, 30);
    for (const x of t) {
      expect(x.fits).toBe(true);
      expect(x.bytes).toBeLessThanOrEqual(maxBytes);
      // The newest photo is always shown.
      expect(x.replaced).toBeLessThan(x.n);
    }
    // A move: a message before the earlier request's last one changed. Between moves, at most
    // that last message changes (its photo left out while too few images precede it for a step):
    // everything before it is read from the cache.
    const moves = t.filter((x) => x.firstDiff >= 0 && x.firstDiff < x.lastBefore).map((x) => x.n);
    expect(moves).toEqual([8, 18, 28]);
    for (let i = 1; i < moves.length; i++) expect(moves[i] - moves[i - 1]).toBeGreaterThanOrEqual(IMAGE_STEP);
  });

  it("with photos small enough that a step fits (~1.2 MB, 26 fit), nothing moves between steps of IMAGE_STEP", () => {
    // (Sized so that the placeholders' own words, ~370 bytes each, bring no step a turn early here.)
    const t = turns(photo(11_635), 20, 50);
    for (const x of t) expect(x.fits).toBe(true);
    const changed = t.filter((x) => x.firstDiff >= 0);
    expect(changed.map((x) => x.n)).toEqual([27, 37, 47]);
    for (const x of changed) {
      // The step leaves out IMAGE_STEP more of the oldest photos: the prefix moves at the first of them.
      const before = t[t.indexOf(x) - 1];
      expect(x.replaced - before.replaced).toBe(IMAGE_STEP);
      expect(x.firstDiff).toBe(2 * before.replaced);
    }
  });
});
