// The Messages API's limits on images, as it counts them (research: request-rules.md §4.7):
// - the base64 string at most 5 MB (5,242,880 chars: "image exceeds 5 MB maximum"), so at most
//   3,932,160 bytes of picture;
// - a side at most 8000 px, and at most 2000 px once a request carries more than 20 images
//   (platform.claude.com/docs/en/build-with-claude/vision);
// - png, jpeg, gif or webp, and bytes that really are the declared type.
// An image that breaks one is refused by the API on every later request that replays it, so the
// entrances refuse it and the tools never return it.
import { imageInfo, isJpeg, jpegInfo, type ImageInfo } from "./image-size";

export const MODEL_IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export const MAX_IMAGE_BASE64_CHARS = 5 * 1024 * 1024;
/** The most bytes whose base64 fits MAX_IMAGE_BASE64_CHARS (every 3 bytes become 4 chars). */
export const MAX_IMAGE_BYTES = (MAX_IMAGE_BASE64_CHARS / 4) * 3;
export const MAX_IMAGE_SIDE = 8000;
/** More images than this in one request, and each side must be at most MANY_IMAGES_SIDE. */
export const MANY_IMAGES = 20;
export const MANY_IMAGES_SIDE = 2000;

/** The first bytes read for the header: enough for PNG, GIF, WebP and nearly every JPEG. */
const HEAD_BYTES = 256 * 1024;

export type ImageCheck = { ok: true; info: ImageInfo } | { ok: false; problem: string };

/**
 * Why `data` is not base64, or null. The forgiving form atob decodes: the alphabet, "=" only as
 * one or two final characters, and no length that leaves a lone character.
 */
export function base64Problem(data: string): string | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data)) return "not valid base64";
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  if (data.length % 4 === 1 || (pad && data.length % 4 !== 0)) return "not valid base64 (its length is not whole)";
  return null;
}

/** The bytes of the first `chars` characters of base64 (a multiple of 4), or of all of it. */
function decodePrefix(data: string, chars: number): Uint8Array {
  const bin = atob(chars >= data.length ? data : data.slice(0, chars));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * The dimensions of the image in `data`, reading past the first 256 KB only for a late JPEG frame
 * header. Throws when `data` is not base64 (atob).
 */
export function base64ImageInfo(data: string): ImageInfo | null {
  const prefixChars = Math.ceil(HEAD_BYTES / 3) * 4;
  const head = decodePrefix(data, prefixChars);
  if (data.length <= prefixChars || !isJpeg(head)) return imageInfo(head);
  const first = jpegInfo(head);
  const found = first === "need-more" ? jpegInfo(decodePrefix(data, data.length)) : first;
  return found === "need-more" ? null : found;
}

/** Whether a picture of these dimensions and this declared type may be shown; the size is checked by the caller. */
function infoCheck(mediaType: string, info: ImageInfo | null): ImageCheck {
  if (!(MODEL_IMAGE_TYPES as readonly string[]).includes(mediaType))
    return { ok: false, problem: `${mediaType} cannot be sent to the model; png, jpeg, gif and webp can` };
  if (!info || `image/${info.format}` !== mediaType)
    return { ok: false, problem: `the bytes are not a ${mediaType} image${info ? ` (they are ${info.format})` : ""}` };
  if (info.width > MAX_IMAGE_SIDE || info.height > MAX_IMAGE_SIDE)
    return { ok: false, problem: `${info.width}x${info.height} px; a side may be at most ${MAX_IMAGE_SIDE} px` };
  return { ok: true, info };
}

/** A base64 image as a request would carry it: size as the API counts it, type, bytes, dimensions. */
export function checkBase64Image(mediaType: string, data: string): ImageCheck {
  if (data.length > MAX_IMAGE_BASE64_CHARS)
    return {
      ok: false,
      problem: `${data.length} base64 characters; an image may be at most ${MAX_IMAGE_BASE64_CHARS} (5 MB of base64)`,
    };
  const malformed = base64Problem(data);
  if (malformed) return { ok: false, problem: malformed };
  return infoCheck(mediaType, base64ImageInfo(data));
}

/** Raw bytes about to become a base64 image (a tool's result). */
export function checkImageBytes(mediaType: string, bytes: Uint8Array): ImageCheck {
  if (bytes.length > MAX_IMAGE_BYTES)
    return {
      ok: false,
      problem: `${bytes.length} bytes; an image may be at most ${MAX_IMAGE_BYTES} bytes (5 MB once base64-encoded)`,
    };
  let info = imageInfo(bytes.subarray(0, HEAD_BYTES));
  if (!info && isJpeg(bytes)) {
    const whole = jpegInfo(bytes);
    info = whole === "need-more" ? null : whole;
  }
  return infoCheck(mediaType, info);
}

/** Whether dimensions fit a request that carries `count` images. */
export const fitsImageCount = (info: Pick<ImageInfo, "width" | "height">, count: number): boolean =>
  count <= MANY_IMAGES || (info.width <= MANY_IMAGES_SIDE && info.height <= MANY_IMAGES_SIDE);
