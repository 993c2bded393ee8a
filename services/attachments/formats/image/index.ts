// The image format: dimensions from the header alone; the image_view tool sends the picture itself.
// An SVG is not one: it is text (file_read reads it), and the model is never shown it as a picture.
// An image the model cannot be shown (HEIC, TIFF, BMP…, or over the Messages API's size or pixel
// limits) gets a note that says so and what can be done instead, never an image_view call that fails.
import type { AttachmentFormat, FormatFacts } from "../format";
import { imageBytes, imageInfoFromReader } from "./image-info";
import { MAX_MODEL_IMAGE_BYTES, MODEL_IMAGE_TYPES } from "./model-image";
import { MAX_IMAGE_SIDE } from "../../../../core/image-limits";

/** SVG is XML text: the text format reads it. */
export const SVG_TYPE = "image/svg+xml";

/** Why image_view cannot show an image with these facts and this size, or null when it can. */
function unviewable(f: FormatFacts, size: number): string | null {
  if (!f.format || !f.width || !f.height) return "its format is not one the model can be shown";
  if (!(MODEL_IMAGE_TYPES as readonly string[]).includes(`image/${f.format}`))
    return `${f.format.toUpperCase()} cannot be shown to the model; PNG, JPEG, GIF and WebP can`;
  if (f.width > MAX_IMAGE_SIDE || f.height > MAX_IMAGE_SIDE)
    return `a side is over ${MAX_IMAGE_SIDE} px, more than the model can be shown`;
  if (size > MAX_MODEL_IMAGE_BYTES)
    return `it is over ${MAX_MODEL_IMAGE_BYTES.toLocaleString("en-US")} bytes, more than the model can be shown (5 MB once base64-encoded)`;
  return null;
}

export const imageFormat = {
  kind: "image",
  detect: (s) => s.type.startsWith("image/") && s.type !== SVG_TYPE,
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
  note(f, { arg, size }) {
    const facts = f.width && f.height ? [`${f.width}x${f.height} ${f.format ?? ""}`.trim()] : [];
    const why = unviewable(f, size);
    if (why)
      return {
        facts,
        how: `No tool can show it to you (${why}); if you need to see it, ask the user to send it as a PNG or JPEG${f.format && f.width && f.height ? ` of at most ${MAX_IMAGE_SIDE} px a side and under 5 MB` : ""}.`,
      };
    return { facts, how: `Look at it with image_view {${arg}} only when you need to see it.` };
  },
  read: imageBytes,
} satisfies AttachmentFormat<"image">;
