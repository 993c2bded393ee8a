// The last pass over a request before it is sent: what the Messages API refuses by count or
// size, however the history came to hold it, is left out with a placeholder that says how to get
// it back (core/request-placeholders.ts). The request's other bytes are untouched.
// - More than 20 images: a side may be at most 2000 px (docs: build-with-claude/vision), so while
//   one is larger than that, the oldest images (of any size) are replaced until 20 remain or none
//   left is too large, rounded up to a step of IMAGE_STEP (the replaced prefix moves once every
//   IMAGE_STEP new images): the newest are kept, so a new photo after 20 screenshots is shown. An
//   image whose size cannot be read counts as too large (the API would refuse it).
// - More images than the model takes (ModelEntry.maxImages: 100 on 200K-window models, 600
//   otherwise): the oldest are replaced, in steps of IMAGE_STEP, so the replaced prefix moves
//   once every IMAGE_STEP new images rather than on every one (the prompt cache holds between).
// - A body over 32 MB is a 413 (docs: api/errors#request-size-limits): the oldest images are
//   replaced, in steps of IMAGE_STEP, so the replaced prefix moves once every IMAGE_STEP images
//   (when fewer than a step come before the last message, all of those go, and the next request
//   differs only from this one's last message on), then the largest tool results before the last
//   message, then, as a last resort, the last message's images, until it fits.
// Pure and deterministic: the same request and limit always give the same bytes.
import type { ImageInfo } from "./image-size";
import { base64ImageInfo, MANY_IMAGES, MANY_IMAGES_SIDE } from "./image-limits";
import { imagePlaceholder, resultStub, utf8Length, type ImageReason, type Locate } from "./request-placeholders";
import type {
  ContentBlock,
  ImageBlock,
  ModelRequest,
  TextBlock,
  ToolResultBlock,
  ToolUseBlock,
  WireMessage,
} from "./types";

/** 32 MB read as 32,000,000 bytes (the smaller reading), less room for what the SDK adds to the body. */
export const MAX_REQUEST_BYTES = 32_000_000 - 256 * 1024;
export const IMAGE_STEP = 10;

export interface FitOptions {
  /** The conversation, named in the conversation_read call of a tool result's stub. */
  conversationId?: string;
  /** Where each tool result is stored (toolResultLocator(history)), for the exact conversation_read call. */
  locate?: Locate;
  /** The body limit in bytes (tests set a small one). */
  maxBytes?: number;
}

export interface FitOutcome {
  /** The request as it may be sent; the very object given when nothing had to change. */
  request: ModelRequest;
  imagesReplaced: number;
  resultsReplaced: number;
  /** The serialized body's UTF-8 bytes, after the replacements. */
  bytes: number;
  /** False when even every replacement left it over maxBytes (the system prompt and tools alone, or text). */
  fits: boolean;
}

interface ImageRef {
  message: number;
  block: number;
  /** The index inside a tool_result's content, when the image is there. */
  inner?: number;
  info: ImageInfo | null;
  /** Over MANY_IMAGES_SIDE, or a base64 image whose size could not be read. */
  large: boolean;
  call?: ToolUseBlock;
  /** The tool_result it is in, when it is in one. */
  toolUseId?: string;
  replaced: boolean;
}

const bytesOf = (v: unknown) => utf8Length(JSON.stringify(v));

/**
 * Dimensions of a base64 image, read as the entrance reads them (core/image-limits.ts): the whole
 * image is decoded when a JPEG's frame header lies past the first 256 KB. `large` when a side is
 * over MANY_IMAGES_SIDE or the size cannot be read (the API would refuse it past 20 images).
 */
function measure(b: ImageBlock): { info: ImageInfo | null; large: boolean } {
  if (b.source.type !== "base64") return { info: null, large: false };
  let info: ImageInfo | null = null;
  try {
    info = base64ImageInfo(b.source.data);
  } catch {
    info = null;
  }
  return { info, large: !info || info.width > MANY_IMAGES_SIDE || info.height > MANY_IMAGES_SIDE };
}

export function fitRequestLimits(request: ModelRequest, maxImages: number, opts: FitOptions = {}): FitOutcome {
  const maxBytes = opts.maxBytes ?? MAX_REQUEST_BYTES;
  const messages: WireMessage[] = request.messages.map((m) => ({
    ...m,
    content: typeof m.content === "string" ? m.content : [...m.content],
  }));
  const calls = new Map<string, ToolUseBlock>();
  const images: ImageRef[] = [];
  messages.forEach((m, message) => {
    if (typeof m.content === "string") return;
    m.content.forEach((b, block) => {
      if (b.type === "tool_use") calls.set(b.id, b);
      if (b.type === "image") images.push({ message, block, ...measure(b), replaced: false });
      if (b.type === "tool_result" && Array.isArray(b.content))
        b.content.forEach(
          (x, inner) =>
            x.type === "image" &&
            images.push({
              message,
              block,
              inner,
              ...measure(x),
              call: calls.get(b.tool_use_id),
              toolUseId: b.tool_use_id,
              replaced: false,
            }),
        );
    });
  });
  let bytes = bytesOf(request);
  let imagesReplaced = 0;
  let resultsReplaced = 0;
  const blocks = (i: number) => messages[i].content as ContentBlock[];

  const storedAt = (ref: ImageRef) => {
    const where = ref.toolUseId === undefined ? null : (opts.locate?.(ref.toolUseId) ?? null);
    return where ? { where, conversationId: opts.conversationId } : undefined;
  };
  const replaceImage = (ref: ImageRef, reason: ImageReason, limit: number) => {
    const outer = blocks(ref.message)[ref.block];
    const current = (
      ref.inner === undefined ? outer : (outer as ToolResultBlock).content[ref.inner as number]
    ) as ImageBlock;
    const text: TextBlock = {
      type: "text",
      text: imagePlaceholder(current, { info: ref.info, reason, limit, call: ref.call, stored: storedAt(ref) }),
      ...(current.cache_control ? { cache_control: current.cache_control } : {}),
    };
    bytes += bytesOf(text) - bytesOf(current);
    if (ref.inner === undefined) blocks(ref.message)[ref.block] = text;
    else {
      const result = outer as ToolResultBlock;
      const content = [...(result.content as Array<TextBlock | ImageBlock>)];
      content[ref.inner] = text;
      blocks(ref.message)[ref.block] = { ...result, content };
    }
    ref.replaced = true;
    imagesReplaced++;
  };

  if (images.length > maxImages) {
    const step = Math.min(images.length, Math.ceil((images.length - maxImages) / IMAGE_STEP) * IMAGE_STEP);
    for (const ref of images.slice(0, step)) replaceImage(ref, "count", maxImages);
  }
  // Past 20 images while one left is too large: the oldest go, whatever their size, so the newest
  // (a photo just sent, an image just viewed) are the ones shown; in steps of IMAGE_STEP, as the
  // count rule, so the replaced prefix moves once every IMAGE_STEP new images (the cache holds).
  const rest = images.filter((ref) => !ref.replaced);
  let large = rest.filter((ref) => ref.large).length;
  let needed = 0;
  while (needed < rest.length && rest.length - needed > MANY_IMAGES && large > 0) if (rest[needed++].large) large--;
  const stepped = needed && Math.min(rest.length, Math.ceil(needed / IMAGE_STEP) * IMAGE_STEP);
  for (const ref of rest.slice(0, stepped)) replaceImage(ref, "many-large", MANY_IMAGES);

  if (bytes > maxBytes) {
    const last = messages.length - 1;
    // Until it fits, then on to a multiple of IMAGE_STEP, as the count rules step: one at a time,
    // the replaced prefix would move (and the prompt cache be written again from there) on every
    // new image. The last message's images are never taken to round the step up.
    let sized = 0;
    for (const ref of images)
      if ((bytes > maxBytes || sized % IMAGE_STEP) && !ref.replaced && ref.message !== last) {
        replaceImage(ref, "size", 0);
        sized++;
      }
    const results = messages
      .slice(0, Math.max(0, last))
      .flatMap((m, message) =>
        typeof m.content === "string"
          ? []
          : m.content.flatMap((b, block) => (b.type === "tool_result" ? [{ message, block, bytes: bytesOf(b) }] : [])),
      );
    // Largest first; equal sizes oldest first, so the choice never depends on sort stability.
    results.sort((a, b) => b.bytes - a.bytes || a.message - b.message || a.block - b.block);
    for (const r of results) {
      if (bytes <= maxBytes) break;
      const result = blocks(r.message)[r.block] as ToolResultBlock;
      const chars =
        typeof result.content === "string"
          ? result.content.length
          : result.content.reduce(
              (n, x) => n + (x.type === "text" ? x.text.length : x.source.type === "base64" ? x.source.data.length : 0),
              0,
            );
      const stub: ToolResultBlock = {
        ...result,
        content: resultStub(chars, {
          call: calls.get(result.tool_use_id),
          where: opts.locate?.(result.tool_use_id) ?? null,
          conversationId: opts.conversationId,
        }),
      };
      if (bytesOf(stub) >= r.bytes) continue;
      bytes += bytesOf(stub) - r.bytes;
      blocks(r.message)[r.block] = stub;
      resultsReplaced++;
    }
    for (const ref of images)
      if (bytes > maxBytes && !ref.replaced && ref.message === last) replaceImage(ref, "size", 0);
  }

  const changed = imagesReplaced > 0 || resultsReplaced > 0;
  return {
    request: changed ? { ...request, messages } : request,
    imagesReplaced,
    resultsReplaced,
    bytes,
    fits: bytes <= maxBytes,
  };
}
