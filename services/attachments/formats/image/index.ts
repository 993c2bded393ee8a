// The image format: dimensions from the header alone; the image_view tool sends the picture itself.
import type { AttachmentFormat } from "../format";
import { imageBytes, imageInfoFromReader } from "./image-info";

export const imageFormat = {
  kind: "image",
  detect: (s) => s.type.startsWith("image/"),
  async probe(reader) {
    const img = await imageInfoFromReader(reader);
    return {
      facts: img
        ? { width: img.width, height: img.height, format: img.format }
        : { problem: "unrecognised image header" },
    };
  },
  keepsKindWhenUnreadable: true,
  tools: ["image_view"],
  note(f, { arg }) {
    const facts = f.width && f.height ? [`${f.width}x${f.height} ${f.format ?? ""}`.trim()] : [];
    return { facts, how: `Look at it with image_view {${arg}} only when you need to see it.` };
  },
  read: imageBytes,
} satisfies AttachmentFormat<"image">;
