// Images as the Messages API counts them: at most 5,242,880 chars of base64, a side of at most
// 8000 px (2000 px once a request carries more than 20 images), bytes of the declared type. The
// turn entrance, client tool results and imported transcripts refuse what breaks them, naming the
// block; image_view and MCP results return a note instead of such an image.
import { describe, expect, it } from "vitest";
import { imageView } from "../../agent/tools/attachment-tools";
import type { ToolContext } from "../../agent/tools/registry";
import { toolResultsBodySchema } from "../../core/client-tools";
import { checkBase64Image, checkImageBytes, MAX_IMAGE_BASE64_CHARS, MAX_IMAGE_BYTES } from "../../core/image-limits";
import { parseImportedMessage } from "../../core/transcript/transcript-check";
import { turnBodySchema } from "../../core/turn-input";
import { describeZodError } from "../../core/validation";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { mcpResultOutput } from "../../services/mcp/results";
import { b64, imageBlock, jpegHead, pngHead } from "./image-bytes";

const refusal = (r: { success: true } | { success: false; error: Parameters<typeof describeZodError>[0] }) =>
  r.success ? "accepted" : describeZodError(r.error);
/** A PNG whose base64 is exactly `chars` long (a multiple of 4). */
const pngOfBase64 = (chars: number, w = 100, h = 100) => b64(pngHead(w, h, (chars / 4) * 3 - pngHead(w, h).length));

describe("checkBase64Image", () => {
  it("counts the base64 string, not the bytes: 5,242,880 chars pass, 4 more do not", () => {
    expect(MAX_IMAGE_BASE64_CHARS).toBe(5_242_880);
    expect(checkBase64Image("image/png", pngOfBase64(MAX_IMAGE_BASE64_CHARS))).toEqual({
      ok: true,
      info: { format: "png", width: 100, height: 100 },
    });
    // 3.9 MB of bytes: under the old 5 MiB byte bound, over the API's 5 MB of base64.
    const over = checkBase64Image("image/png", pngOfBase64(MAX_IMAGE_BASE64_CHARS + 4));
    expect(over).toEqual({
      ok: false,
      problem: "5242884 base64 characters; an image may be at most 5242880 (5 MB of base64)",
    });
  });

  it("refuses bytes of another type, sides over 8000 px and broken base64", () => {
    expect(checkBase64Image("image/png", b64(jpegHead(640, 480)))).toEqual({
      ok: false,
      problem: "the bytes are not a image/png image (they are jpeg)",
    });
    expect(checkBase64Image("image/jpeg", b64(jpegHead(8001, 10)))).toEqual({
      ok: false,
      problem: "8001x10 px; a side may be at most 8000 px",
    });
    expect(checkBase64Image("image/png", b64(pngHead(10, 8000)))).toMatchObject({ ok: true });
    expect(checkBase64Image("image/png", "iVBORw0K=GgoA")).toEqual({ ok: false, problem: "not valid base64" });
    expect(checkBase64Image("image/png", b64(new TextEncoder().encode("not an image at all")))).toEqual({
      ok: false,
      problem: "the bytes are not a image/png image",
    });
  });

  it("checks raw bytes against the same base64 bound", () => {
    expect(MAX_IMAGE_BYTES).toBe(3_932_160);
    expect(checkImageBytes("image/png", pngHead(10, 10, MAX_IMAGE_BYTES - 33))).toMatchObject({ ok: true });
    expect(checkImageBytes("image/png", pngHead(10, 10, MAX_IMAGE_BYTES - 32))).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^3932161 bytes/),
    });
  });
});

describe("the turn entrance", () => {
  const small = b64(pngHead(1000, 800));
  const large = b64(pngHead(2400, 1800));

  it("refuses an image over the limits, naming its block", () => {
    expect(
      refusal(
        turnBodySchema.safeParse({ content: [{ type: "text", text: "look" }, imageBlock(b64(pngHead(9000, 10)))] }),
      ),
    ).toBe("content.1.source.data: 9000x10 px; a side may be at most 8000 px");
    expect(refusal(turnBodySchema.safeParse({ content: [imageBlock(b64(jpegHead(10, 10)))] }))).toBe(
      "content.0.source.data: the bytes are not a image/png image (they are jpeg)",
    );
    expect(refusal(turnBodySchema.safeParse({ content: [imageBlock(pngOfBase64(MAX_IMAGE_BASE64_CHARS + 4))] }))).toBe(
      "content.0.source.data: at most 5242880 base64 characters (the API's 5 MB image limit)",
    );
  });

  it("refuses a side over 2000 px only when the turn carries more than 20 images", () => {
    const twenty = [...Array(19).fill(imageBlock(small)), imageBlock(large)];
    expect(refusal(turnBodySchema.safeParse({ content: twenty }))).toBe("accepted");
    expect(refusal(turnBodySchema.safeParse({ content: [...twenty, imageBlock(small)] }))).toBe(
      "content.19.source.data: 2400x1800 px; with more than 20 images (here 21) a side may be at most 2000 px",
    );
  });

  it("holds client tool results and imported transcripts to the same limits", () => {
    const post = {
      results: [{ tool_use_id: "t1", content: [{ type: "text", text: "shot" }, imageBlock(b64(pngHead(8001, 8001)))] }],
    };
    expect(refusal(toolResultsBodySchema.safeParse(post))).toBe(
      "results.0.content.1.source.data: 8001x8001 px; a side may be at most 8000 px",
    );
    const imported = {
      role: "user",
      content: [{ type: "text", text: "see" }, imageBlock(b64(jpegHead(10, 10)), "image/gif")],
    };
    expect(() => parseImportedMessage(JSON.stringify(imported), "messages[0]")).toThrow(
      "messages[0].content.1.source.data: the bytes are not a image/gif image (they are jpeg)",
    );
  });
});

describe("images a tool returns", () => {
  const ctxWith = (bytes: Uint8Array, facts: Record<string, unknown>) =>
    ({
      openAttachment: async () => ({
        attachment: { id: "att_1", name: "shot.png", type: "image/png", facts: { kind: "image", ...facts } },
        reader: memoryRangeReader(bytes),
      }),
    }) as unknown as ToolContext;
  const ID = "att_01JZ0000000000000000000000";

  it("image_view returns a note, not an image the API would refuse", async () => {
    const wide = await imageView.run({ attachment_id: ID }, ctxWith(pngHead(9000, 100), { width: 9000, height: 100 }));
    expect(wide).toEqual({
      content: "shot.png cannot be viewed: 9000x100 px; a side may be at most 8000 px",
      isError: true,
    });
    const heavy = await imageView.run(
      { attachment_id: ID },
      ctxWith(pngHead(100, 100, 4_000_000), { width: 100, height: 100 }),
    );
    expect(heavy.isError).toBe(true);
    expect(heavy.content).toMatch(
      /is 4000033 bytes; images over 3932160 bytes \(5 MB once base64-encoded\) cannot be viewed/,
    );
    const fine = await imageView.run({ attachment_id: ID }, ctxWith(pngHead(100, 100), { width: 100, height: 100 }));
    expect(fine.blocks?.[1]).toEqual(imageBlock(b64(pngHead(100, 100))));
  });

  it("an MCP tool's image over the limits becomes a note", () => {
    const out = mcpResultOutput({ content: [{ type: "image", data: b64(pngHead(100, 8001)), mimeType: "image/png" }] });
    expect(out.blocks).toBeUndefined();
    expect(out.content).toBe("[image not shown: 100x8001 px; a side may be at most 8000 px]");
  });
});
