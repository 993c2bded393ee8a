// Images as the entrances take them (a turn's blocks, a client tool's result): the block's shape
// here, and the Messages API's limits (core/image-limits.ts) checked over all the images one
// request body brings, so each refusal names its block.
import { z } from "zod";
import {
  checkBase64Image,
  fitsImageCount,
  MANY_IMAGES,
  MANY_IMAGES_SIDE,
  MAX_IMAGE_BASE64_CHARS,
  MODEL_IMAGE_TYPES,
  base64Problem,
} from "./image-limits";

export const imageSourceSchema = z.strictObject({
  type: z.literal("base64"),
  media_type: z.enum(MODEL_IMAGE_TYPES),
  data: z
    .string()
    .min(1)
    .max(MAX_IMAGE_BASE64_CHARS, `at most ${MAX_IMAGE_BASE64_CHARS} base64 characters (the API's 5 MB image limit)`)
    .superRefine((data, ctx) => {
      const problem = base64Problem(data);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
});

export type ImageSource = z.infer<typeof imageSourceSchema>;
export type PathSegment = string | number;

/**
 * Every image's problem, by its path: bytes that are not the declared type, a side over 8000 px,
 * and, when there are more than 20 images, a side over 2000 px. Run after the shape checks.
 */
export function imageProblems(
  images: readonly { path: PathSegment[]; source: ImageSource }[],
): { path: PathSegment[]; problem: string }[] {
  const out: { path: PathSegment[]; problem: string }[] = [];
  for (const { path, source } of images) {
    // Its size and its base64 are imageSourceSchema's to report; zod runs this refinement anyway.
    if (source.data.length > MAX_IMAGE_BASE64_CHARS || base64Problem(source.data)) continue;
    const check = checkBase64Image(source.media_type, source.data);
    if (!check.ok) out.push({ path, problem: check.problem });
    else if (!fitsImageCount(check.info, images.length))
      out.push({
        path,
        problem: `${check.info.width}x${check.info.height} px; with more than ${MANY_IMAGES} images (here ${images.length}) a side may be at most ${MANY_IMAGES_SIDE} px`,
      });
  }
  return out;
}

/** The image blocks of a content array, each with its path (index, "source", "data"). */
export function imagesOf(
  blocks: readonly { type: string }[],
  prefix: PathSegment[] = [],
): { path: PathSegment[]; source: ImageSource }[] {
  return blocks.flatMap((b, i) =>
    b.type === "image"
      ? [{ path: [...prefix, i, "source", "data"], source: (b as unknown as { source: ImageSource }).source }]
      : [],
  );
}
