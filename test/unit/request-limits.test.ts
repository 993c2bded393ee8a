// fitRequestLimits: the last pass over a request. Over 20 images with a side over 2000 px, the oldest go; over the
// model's image count, the oldest go (in steps of 10, for the prompt cache); over 32 MB, the oldest
// images, then the largest earlier tool results. Each leaves words saying how to get it back.
import { describe, expect, it } from "vitest";
import { fitRequestLimits, IMAGE_STEP, MAX_REQUEST_BYTES } from "../../core/request-limits";
import { toolResultLocator } from "../../core/request-placeholders";
import type { ContentBlock, ImageBlock, ModelRequest, StoredMessage, WireMessage } from "../../core/types";
import { b64, imageBlock, pngHead } from "./image-bytes";
import { blockAs, blocksIn } from "../blocks";

const SMALL = b64(pngHead(800, 600));
const LARGE = b64(pngHead(2400, 1800));
const request = (messages: WireMessage[]): ModelRequest => ({
  model: "claude-sonnet-5-5",
  max_tokens: 1000,
  system: [{ type: "text", text: "You help." }],
  tools: [],
  messages,
});
const user = (...content: ContentBlock[]): WireMessage => ({ role: "user", content });
const images = (m: WireMessage) => (m.content as ContentBlock[]).filter((b) => b.type === "image").length;
const texts = (r: ModelRequest) =>
  r.messages.flatMap((m) =>
    (m.content as ContentBlock[]).flatMap((b) =>
      b.type === "text"
        ? [b.text]
        : b.type === "tool_result" && typeof b.content !== "string"
          ? b.content.flatMap((x) => (x.type === "text" ? [x.text] : []))
          : b.type === "tool_result"
            ? [b.content]
            : [],
    ),
  );

/** A conversation where each exchange sends one image. */
function exchanges(datas: string[]): WireMessage[] {
  return datas
    .flatMap((data, i) => [
      user({ type: "text", text: `picture ${i}` }, imageBlock(data) as ContentBlock),
      { role: "assistant" as const, content: [{ type: "text" as const, text: `seen ${i}` }] },
    ])
    .concat([user({ type: "text", text: "and now?" })]);
}

describe("fitRequestLimits", () => {
  it("returns the very request when it is within every limit", () => {
    const r = request(exchanges([SMALL, LARGE]));
    const out = fitRequestLimits(r, 100);
    expect(out.request).toBe(r);
    expect(out).toMatchObject({ imagesReplaced: 0, resultsReplaced: 0, fits: true, bytes: JSON.stringify(r).length });
    expect(MAX_REQUEST_BYTES).toBe(32_000_000 - 262_144);
  });

  it("over 20 images with a large one, replaces the oldest (any size) in steps of 10 until 20 remain or none is large", () => {
    const datas = Array.from({ length: 21 }, (_, i) => (i === 3 || i === 15 ? LARGE : SMALL));
    const out = fitRequestLimits(request(exchanges(datas)), 100);
    // One would do (20 remain); the step takes IMAGE_STEP, so the next 9 images move nothing.
    expect(out.imagesReplaced).toBe(IMAGE_STEP);
    expect(images(out.request.messages[0])).toBe(0);
    expect(images(out.request.messages[6])).toBe(0);
    expect(images(out.request.messages[30])).toBe(1); // the newer large one stays
    expect(out.request.messages[0].content).toEqual([
      { type: "text", text: "picture 0" },
      {
        type: "text",
        text: "[image left out of this request: 800x600 image/png sent in the conversation, because a request with more than 20 images may not carry a side over 2000 px, so the oldest images make way for newer ones; it cannot be shown again here; ask for it to be sent again if it is needed (the newest images are kept).]",
      },
    ]);
    const many = Array.from({ length: 25 }, (_, i) => (i % 10 === 0 ? LARGE : SMALL));
    expect(fitRequestLimits(request(exchanges(many)), 100).imagesReplaced).toBe(IMAGE_STEP);
    // No large image: more than 20 small ones are all kept.
    expect(fitRequestLimits(request(exchanges(Array(30).fill(SMALL))), 100).imagesReplaced).toBe(0);
  });

  it("over the model's image count, replaces the oldest in steps of 10, the same way every time", () => {
    const r = request(exchanges(Array(103).fill(SMALL)));
    const given = JSON.stringify(r);
    const out = fitRequestLimits(r, 100);
    expect(JSON.stringify(r)).toBe(given); // the request given is never changed
    expect(out.imagesReplaced).toBe(IMAGE_STEP);
    const shown = out.request.messages.reduce((n, m) => n + (m.role === "user" ? images(m) : 0), 0);
    expect(shown).toBe(93);
    expect(images(out.request.messages[18])).toBe(0);
    expect(images(out.request.messages[20])).toBe(1);
    expect(texts(out.request)).toContain(
      "[image left out of this request: 800x600 image/png sent in the conversation, because this model takes at most 100 images per request and newer ones came after it; it cannot be shown again here; ask for it to be sent again if it is needed.]",
    );
    expect(JSON.stringify(fitRequestLimits(structuredClone(r), 100).request)).toBe(JSON.stringify(out.request));
    expect(fitRequestLimits(request(exchanges(Array(110).fill(SMALL))), 100).imagesReplaced).toBe(IMAGE_STEP);
    expect(fitRequestLimits(request(exchanges(Array(111).fill(SMALL))), 100).imagesReplaced).toBe(2 * IMAGE_STEP);
  });

  it("names the tool call that shows an image again, and keeps a cache breakpoint", () => {
    const call: ContentBlock = {
      type: "tool_use",
      id: "toolu_v",
      name: "image_view",
      input: { attachment_id: "att_1" },
    };
    const messages: WireMessage[] = [
      user({ type: "text", text: "look at my chart" }),
      { role: "assistant", content: [call] },
      user({
        type: "tool_result",
        tool_use_id: "toolu_v",
        content: [
          { type: "text", text: "chart.png (2400x1800)" },
          { ...(imageBlock(LARGE) as ImageBlock), cache_control: { type: "ephemeral" } },
        ],
      }),
      ...exchanges(Array(20).fill(SMALL)),
    ];
    const out = fitRequestLimits(request(messages), 600);
    expect(out.imagesReplaced).toBe(IMAGE_STEP);
    expect((blockAs(blocksIn(out.request.messages[2])[0], "tool_result").content as ContentBlock[])[1]).toEqual({
      type: "text",
      text: '[image left out of this request: 2400x1800 image/png returned by image_view {"attachment_id":"att_1"}, because a request with more than 20 images may not carry a side over 2000 px, so the oldest images make way for newer ones; calling image_view {"attachment_id":"att_1"} again shows it (the newest images are kept).]',
      cache_control: { type: "ephemeral" },
    });
  });

  it("over the size limit, replaces the oldest images, then the largest earlier tool results, with the call that reads them back", () => {
    const big = b64(pngHead(100, 100, 30_000));
    const stored: StoredMessage[] = [
      { id: "msg_a", seq: 1, role: "user", content: [{ type: "text", text: "read both" }], createdAt: "" },
      {
        id: "msg_b",
        seq: 2,
        role: "assistant",
        content: [
          { type: "tool_use", id: "t1", name: "file_read", input: { attachment_id: "att_2", lines: "1-2000" } },
          { type: "tool_use", id: "t2", name: "file_read", input: { attachment_id: "att_3", lines: "1-10" } },
        ],
        createdAt: "",
      },
      {
        id: "msg_c",
        seq: 3,
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "x".repeat(60_000) },
          { type: "tool_result", tool_use_id: "t2", content: "y".repeat(5_000) },
        ],
        createdAt: "",
      },
    ];
    const messages: WireMessage[] = [
      user({ type: "text", text: "first" }, imageBlock(big) as ContentBlock),
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
      ...stored.map((m) => ({ role: m.role, content: m.content })),
      { role: "assistant", content: [{ type: "text", text: "done" }] },
      user({ type: "text", text: "now" }, imageBlock(big) as ContentBlock),
    ];
    const r = request(messages);
    const before = JSON.stringify(r).length;
    const out = fitRequestLimits(r, 100, {
      maxBytes: before - 40_000,
      conversationId: "conv_1",
      locate: toolResultLocator(stored),
    });
    expect(out).toMatchObject({ imagesReplaced: 1, resultsReplaced: 1, fits: true });
    expect(out.bytes).toBe(JSON.stringify(out.request).length);
    expect(images(out.request.messages[0])).toBe(0);
    expect(images(out.request.messages[6])).toBe(1); // the last message keeps its image
    expect(blocksIn(out.request.messages[4])[0]).toEqual({
      type: "tool_result",
      tool_use_id: "t1",
      content:
        '[tool result left out of this request to fit the Messages API\'s 32 MB limit: file_read {"attachment_id":"att_2","lines":"1-2000"} returned 60,000 chars. It is stored unchanged; conversation_read {"conversation_id":"conv_1","message_id":"msg_c","block":0} returns it byte for byte.]',
    });
    expect(blockAs(blocksIn(out.request.messages[4])[1], "tool_result").content).toBe("y".repeat(5_000));
  });

  it("says when nothing it may replace makes the request fit", () => {
    const out = fitRequestLimits(request([user({ type: "text", text: "z".repeat(2_000) })]), 100, { maxBytes: 1_000 });
    expect(out.fits).toBe(false);
  });
});
