/**
 * Image limits, read from the image bytes themselves: media type, size of the base64 data, pixel
 * dimensions and the number of images per request. Images inside tool results and inside documents
 * whose source is a content list (at either level) count and are checked too. Source:
 * https://platform.claude.com/docs/en/build-with-claude/vision (limits); wording from the API as
 * reported (gptme/gptme#185, anthropics/claude-code#5147, #12750, #8647, vybestack/llxprt-code#2130)
 * except the image count, whose wording is ours.
 */
import { invalid } from "../errors";
import { decodeBase64, imageInfo } from "../image-size";
import type { WireBlock } from "../wire";
import { eachBlock, isObject, literal, nestedBlocks, oneOf, type Rule, type RuleContext } from "./context";

export const MAX_IMAGE_BASE64 = 5_242_880;
const MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];

type Located = { block: WireBlock; path: string };

/**
 * A block's images: the block itself, or the image blocks of a document whose source is a list of
 * content blocks (`{type: "content", content: [...]}`), which the model sees as images too.
 */
function imagesIn({ block, path }: Located): Located[] {
  if (block.type === "image") return [{ block, path }];
  const source = block.source;
  if (block.type !== "document" || !isObject(source) || source.type !== "content" || !Array.isArray(source.content))
    return [];
  return (source.content as unknown[]).flatMap((inner, k) =>
    isObject(inner) && inner.type === "image"
      ? [{ block: inner as WireBlock, path: `${path}.document.source.content.content.${k}` }]
      : [],
  );
}

/** Every image of the request: top level, in tool results, and in content-source documents of either. */
function images(request: RuleContext["request"]): Located[] {
  const found: Located[] = [];
  for (const at of eachBlock(request))
    for (const located of [{ block: at.block, path: at.path }, ...nestedBlocks(at)]) found.push(...imagesIn(located));
  return found;
}

/** More images than the model takes in one request (100 on 200K-window models, 600 on the others). Source: https://platform.claude.com/docs/en/build-with-claude/vision */
export const imageCount: Rule = ({ request, model }) => {
  const count = images(request).length;
  if (count > model.maxImages)
    throw invalid(`messages: A maximum of ${model.maxImages} images may be provided. Found ${count}.`);
};

/**
 * Each base64 image: a known media type that matches its bytes, at most 5 MB of base64, sides within
 * 8000 px (2000 px past 20 images). Source: https://platform.claude.com/docs/en/build-with-claude/vision
 * An image's `transformations: {oversized_image: "error"}` (the pinned SDK's ImageTransformationsParam)
 * makes the refusal name every image over the limit in `error.details` (error_code
 * `image_dimensions_too_large`, `max_side_length_pixels`, `paths`), which the SDK raises as
 * ImageDimensionsTooLargeError. The SDK calls "downsize" the default; the vision page says an image
 * over the limit is refused, and the stand-in keeps refusing without the option (stricter when unsure).
 */
export const imageData: Rule = ({ request }) => {
  const all = images(request);
  const many = all.length > 20;
  const limit = many ? 2000 : 8000;
  const oversized: string[] = [];
  let detailed = false;
  for (const { block, path } of all) {
    checkTransformations(block, path);
    const source = block.source;
    if (!isObject(source)) throw invalid(`${path}.image.source: Field required`);
    if (source.type !== "base64") {
      if (source.type !== "url" && source.type !== "file")
        throw invalid(
          `${path}.image.source: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`,
        );
      continue;
    }
    const at = `${path}.image.source.base64`;
    if (!MEDIA_TYPES.includes(source.media_type as string))
      throw invalid(`${at}.media_type: Input should be ${oneOf(MEDIA_TYPES)}`);
    const data = typeof source.data === "string" ? source.data : "";
    if (data === "") throw invalid(`${at}: image cannot be empty`);
    if (data.length > MAX_IMAGE_BASE64)
      throw invalid(`${at}: image exceeds 5 MB maximum: ${data.length} bytes > ${MAX_IMAGE_BASE64} bytes`);
    const bytes = decodeBase64(data);
    const info = bytes ? imageInfo(bytes) : null;
    if (!info) throw invalid("Could not process image");
    if (info.format !== source.media_type)
      throw invalid(
        `${at}: The image was specified using the ${String(source.media_type)} media type, but the image appears to be a ${info.format} image`,
      );
    if (info.width > limit || info.height > limit) {
      oversized.push(path);
      detailed ||= isObject(block.transformations) && block.transformations.oversized_image === "error";
    }
  }
  if (!oversized.length) return;
  const error = invalid(
    `${oversized[0]}.image.source.base64.data: At least one of the image dimensions exceed max allowed size${many ? " for many-image requests" : ""}: ${limit} pixels`,
  );
  if (detailed)
    error.details = { error_code: "image_dimensions_too_large", max_side_length_pixels: limit, paths: oversized };
  throw error;
};

/** `transformations`: null, or an object whose only key, `oversized_image`, is "downsize" or "error". */
function checkTransformations(block: WireBlock, path: string): void {
  const t = block.transformations;
  if (t === undefined || t === null) return;
  const at = `${path}.image.transformations`;
  if (!isObject(t)) throw invalid(`${at}: Input should be a valid dictionary or object to extract fields from`);
  for (const key of Object.keys(t))
    if (key !== "oversized_image") throw invalid(`${at}.${key}: Extra inputs are not permitted`);
  literal(t.oversized_image, { path: `${at}.oversized_image`, values: ["downsize", "error"] });
}
