// What the model may be shown as an image, wherever the picture comes from (an attachment through
// image_view, a tool's result): the Messages API's limits as it counts them (core/image-limits.ts):
// the media types it reads, 5 MB of base64, a side of at most 8000 px, and bytes that really are
// the format they claim.
import { checkImageBytes, MAX_IMAGE_BYTES, MODEL_IMAGE_TYPES } from "../../../../core/image-limits";

export { MODEL_IMAGE_TYPES };
/** Raw bytes: their base64 must fit the API's 5 MB, so this is 3,932,160, not 5 MiB. */
export const MAX_MODEL_IMAGE_BYTES = MAX_IMAGE_BYTES;

/** Why these bytes cannot be shown as `mediaType`, or null when they can. */
export function modelImageProblem(mediaType: string, bytes: Uint8Array): string | null {
  const check = checkImageBytes(mediaType, bytes);
  return check.ok ? null : check.problem;
}
