// fitRequestLimits past 20 images: the oldest images (of any size) make way until at most 20
// remain or none left is over 2000 px, so the newest photo is never the one dropped; a JPEG whose
// frame header lies past the first 256 KB is measured whole, and one never measured counts as
// too large. The placeholders promise only what would get the image back.
import { describe, expect, it } from "vitest";
import { fitRequestLimits } from "../../core/request-limits";
import type { ContentBlock, ModelRequest, WireMessage } from "../../core/types";
import { b64, imageBlock, jpegHead, pngHead } from "./image-bytes";

const request = (messages: WireMessage[]): ModelRequest => ({
  model: "claude-sonnet-5-5",
  max_tokens: 1000,
  system: [{ type: "text", text: "You help." }],
  tools: [],
  messages,
});

/** One exchange per image, then a last user message carrying `last` (with text). */
function conversation(olderImages: string[], last: ContentBlock): WireMessage[] {
  return olderImages
    .flatMap((data, i): WireMessage[] => [
      { role: "user", content: [{ type: "text", text: `shot ${i}` }, imageBlock(data) as ContentBlock] },
      { role: "assistant", content: [{ type: "text", text: `seen ${i}` }] },
    ])
    .concat([{ role: "user", content: [{ type: "text", text: "and this photo?" }, last] }]);
}

const shownImages = (r: ModelRequest) =>
  r.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content.filter((b) => b.type === "image")));
const placeholders = (r: ModelRequest) =>
  r.messages.flatMap((m) =>
    typeof m.content === "string"
      ? []
      : m.content.flatMap((b) => (b.type === "text" && b.text.startsWith("[image left out") ? [b.text] : [])),
  );

/** A JPEG whose frame header follows `app2` bytes of APP2 (ICC) segments. */
function lateSofJpeg(width: number, height: number, app2: number): Uint8Array {
  const head = jpegHead(width, height);
  const segments: number[] = [];
  for (let left = app2; left > 0; ) {
    const len = Math.min(65_533, left);
    segments.push(0xff, 0xe2, ((len + 2) >> 8) & 255, (len + 2) & 255, ...new Uint8Array(len));
    left -= len;
  }
  // SOI, then the ICC segments, then the JFIF segment and frame header jpegHead carries.
  return Uint8Array.from([0xff, 0xd8, ...segments, ...head.subarray(2)]);
}

describe("fitRequestLimits over 20 images", () => {
  it("keeps a new 2400x1800 photo after 20 small screenshots, leaving out the oldest screenshot", () => {
    const small = b64(pngHead(100, 100));
    const photo = imageBlock(b64(pngHead(2400, 1800))) as ContentBlock;
    const out = fitRequestLimits(request(conversation(Array(20).fill(small), photo)), 100);
    const last = out.request.messages.at(-1)!.content as ContentBlock[];
    expect(last[1]).toEqual(photo);
    // One screenshot would do; the step of 10 keeps the replaced prefix still for the next 9 images.
    expect(out.imagesReplaced).toBe(10);
    expect(shownImages(out.request)).toHaveLength(11);
    expect((out.request.messages[0].content as ContentBlock[])[1].type).toBe("text");
    const [text] = placeholders(out.request);
    expect(text).toContain("100x100 image/png sent in the conversation");
    expect(text).toContain("more than 20 images");
    // It says what would bring it back and why that works: the newest images are the ones kept.
    expect(text).toContain("the newest images are kept");
  });

  it("stops at the step past the last image over 2000 px, even with more than 20 remaining", () => {
    const small = b64(pngHead(100, 100));
    const large = b64(pngHead(2400, 1800));
    const datas = [large, large, ...Array(22).fill(small)];
    const out = fitRequestLimits(request(conversation(datas, { type: "text", text: "." })), 100);
    expect(out.imagesReplaced).toBe(10);
    expect(shownImages(out.request)).toHaveLength(14);
  });

  it("measures a JPEG whose frame header lies past 256 KB, and replaces it when too large", () => {
    const small = b64(pngHead(100, 100));
    const late = imageBlock(b64(lateSofJpeg(3000, 2000, 300 * 1024)), "image/jpeg") as ContentBlock;
    // The late JPEG is the newest: only its real size (or counting the unknown as too large) makes
    // the oldest screenshot give way.
    const out = fitRequestLimits(request(conversation(Array(21).fill(small), late)), 100);
    expect(out.imagesReplaced).toBe(10);
    expect(shownImages(out.request)).toHaveLength(12);
    expect((out.request.messages.at(-1)!.content as ContentBlock[])[1]).toEqual(late);
  });

  it("treats an image whose size cannot be read as too large", () => {
    const small = b64(pngHead(100, 100));
    // A JPEG that ends before any frame header: its size is unknown.
    const unknown = b64(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0]));
    const out = fitRequestLimits(
      request(conversation([unknown, ...Array(20).fill(small)], { type: "text", text: "." })),
      100,
    );
    expect(out.imagesReplaced).toBe(10);
    expect((out.request.messages[0].content as ContentBlock[])[1].type).toBe("text");
  });

  it("keeps the request's prefix byte-stable while new images come, moving the cut once every 10", () => {
    const small = b64(pngHead(100, 100));
    const large = b64(pngHead(2400, 1800));
    // 20 screenshots, a photo, then a screenshot more each turn.
    const built = (extra: number) =>
      fitRequestLimits(
        request(
          conversation([...Array(20).fill(small), large, ...Array(extra).fill(small)], { type: "text", text: "." }),
        ),
        100,
      ).request;
    // The first message that differs from the turn before's: none inside the common prefix until
    // the step moves (the 10th new image), where the cut moves once.
    const firstDiff = (a: ReturnType<typeof built>, b: ReturnType<typeof built>) =>
      a.messages.findIndex((m, k) => JSON.stringify(m) !== JSON.stringify(b.messages[k]));
    let before = built(0);
    const moved: number[] = [];
    for (let extra = 1; extra <= 10; extra++) {
      const next = built(extra);
      const at = firstDiff(before, next);
      if (at >= 0 && at < before.messages.length - 1) moved.push(extra);
      before = next;
    }
    expect(moved).toEqual([10]);
  });

  it("keeps the other limits: the model's image count still replaces in steps", () => {
    const small = b64(pngHead(100, 100));
    const out = fitRequestLimits(request(conversation(Array(103).fill(small), { type: "text", text: "." })), 100);
    expect(out.imagesReplaced).toBe(10);
  });
});
