// Images that must keep reaching the model inside workerd: a 2400x1800 photo sent after 20 small
// screenshots is in the request (the oldest screenshots give way, ten at a time), turn after turn; a JPEG whose
// frame header sits past 256 KB of ICC metadata gets its real size; an SVG is text file_read reads.
import { describe, expect, it } from "vitest";
import { api, createConversation, send } from "./helpers";
import { toolText, upload } from "./attachment-helpers";
import { b64, imageBlock, pngHead } from "../unit/image-bytes";

/** A PNG header claiming width x height (all the limits read), base64. */
const png = (width: number, height: number) => b64(pngHead(width, height));
const image = (data: string) => imageBlock(data);

interface ReplayBlock {
  type: string;
  text?: string;
  source?: { data: string };
}

async function replayBlocks(id: string): Promise<ReplayBlock[]> {
  const r = await api("GET", `/v1/conversations/${id}/replay`);
  expect(r.status).toBe(200);
  const messages = (r.json as unknown as { messages: { content: string | ReplayBlock[] }[] }).messages;
  return messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content));
}

describe("images past 20 in a conversation", () => {
  it("keep a new 2400x1800 photo after 20 small screenshots, every turn", { timeout: 120_000 }, async () => {
    const id = await createConversation();
    for (let i = 0; i < 20; i++)
      expect((await send(id, [{ type: "text", text: `shot ${i}` }, image(png(100, 100))])).status).toBe(200);
    const photo = png(2400, 1800);
    expect((await send(id, [{ type: "text", text: "what is in this photo?" }, image(photo)])).status).toBe(200);
    for (let turn = 0; turn < 2; turn++) {
      const blocks = await replayBlocks(id);
      expect(blocks.some((b) => b.type === "image" && b.source?.data === photo)).toBe(true);
      const left = blocks.filter((b) => b.type === "text" && b.text?.startsWith("[image left out"));
      expect(left.length).toBeGreaterThan(0);
      expect(left.every((b) => b.text!.includes("100x100"))).toBe(true);
      expect(blocks.filter((b) => b.type === "image").length).toBeLessThanOrEqual(20);
      expect((await send(id, "and now?")).status).toBe(200);
    }
  });
});

describe("image uploads", () => {
  it("measure a JPEG whose frame header lies past 256 KB of ICC metadata", async () => {
    const id = await createConversation();
    const parts: number[] = [0xff, 0xd8];
    for (let left = 300_000; left > 0; left -= 65_000) {
      const n = Math.min(65_000, left) + 2;
      parts.push(0xff, 0xe2, n >> 8, n & 255, ...new Uint8Array(n - 2));
    }
    parts.push(
      0xff,
      0xc0,
      0,
      17,
      8,
      3024 >> 8,
      3024 & 255,
      4032 >> 8,
      4032 & 255,
      3,
      1,
      0x22,
      0,
      2,
      0x11,
      1,
      3,
      0x11,
      1,
    );
    parts.push(0xff, 0xda, 0, 4, 0, 0, 0xff, 0xd9);
    const up = await upload(id, "photo.jpg", new Uint8Array(parts), "image/jpeg");
    expect(up.status).toBe(201);
    expect(up.json.facts).toMatchObject({ kind: "image", width: 4032, height: 3024 });
    expect(up.json.note).not.toContain("could not be inspected");
  });

  it("file an SVG as text that file_read reads", async () => {
    const id = await createConversation();
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><text x="1" y="9">kumquat</text></svg>\n';
    const up = await upload(id, "logo.svg", svg, "image/svg+xml");
    expect(up.status).toBe(201);
    expect(up.json).toMatchObject({ type: "image/svg+xml", facts: { kind: "text" } });
    expect(up.json.note).not.toContain("image_view");
    const out = toolText(await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"1-1"}`));
    expect(out).toContain("kumquat");
  });
});
