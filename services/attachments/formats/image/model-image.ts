// What the model may be shown as an image, wherever the picture comes from (an attachment through
// image_view, a tool's result): the media types the model reads, a size bound, and bytes that
// really are the format they claim.
import { imageInfo, type ImageInfo } from "./image-info";

export const MODEL_IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export const MAX_MODEL_IMAGE_BYTES = 5 * 1024 * 1024;

/** Why these bytes cannot be shown as `mediaType`, or null when they can. */
export function modelImageProblem(mediaType: string, bytes: Uint8Array): string | null {
  if (!(MODEL_IMAGE_TYPES as readonly string[]).includes(mediaType)) return `${mediaType} cannot be viewed; png, jpeg, gif and webp can`;
  if (bytes.length > MAX_MODEL_IMAGE_BYTES) return `${bytes.length} bytes; images over ${MAX_MODEL_IMAGE_BYTES} bytes cannot be viewed`;
  const info: ImageInfo | null = imageInfo(bytes.subarray(0, 256 * 1024));
  if (!info || `image/${info.format}` !== mediaType) return `the bytes are not a ${mediaType} image`;
  return null;
}
