/**
 * The `source` of image and document blocks (top level, inside a tool_result, and the blocks of a
 * document's `content` source), checked against the pinned SDK's source types: each tag its own
 * fields and no others (`Base64ImageSource {data, media_type}`, `URLImageSource {url}`,
 * `FileImageSource {file_id}`; `Base64PDFSource` of media type application/pdf, `PlainTextSource`
 * of text/plain, `ContentBlockSource {content}` of text and image blocks, `URLPDFSource {url}`,
 * `FileDocumentSource {file_id}`); a content source's own blocks as the same blocks at any other level
 * (fields, value types, cache_control: fields.ts `checkContentSourceBlock`). Source:
 * https://platform.claude.com/docs/en/api/messages (the request schema the SDK is generated from) and .../build-with-claude/pdf-support; the messages are
 * the schema's wording as the API words its other fields.
 */
import { base64Problem } from "../../image-limits";
import { invalid } from "../errors";
import type { WireBlock } from "../wire";
import { eachBlock, isObject, literal, nestedBlocks, type Rule } from "./context";
import { checkContentSourceBlock, checkFields } from "./fields";

const fields = (required: string[]) => ({ required, optional: [] as string[] });
const IMAGE_SOURCES: Record<string, ReturnType<typeof fields>> = {
  base64: fields(["data", "media_type"]),
  url: fields(["url"]),
  file: fields(["file_id"]),
};
const DOCUMENT_SOURCES: Record<string, ReturnType<typeof fields>> = {
  base64: fields(["data", "media_type"]),
  text: fields(["data", "media_type"]),
  content: fields(["content"]),
  url: fields(["url"]),
  file: fields(["file_id"]),
};
const DOCUMENT_MEDIA: Record<string, string> = { base64: "application/pdf", text: "text/plain" };

function tagged(
  source: unknown,
  { path, kinds }: { path: string; kinds: Record<string, ReturnType<typeof fields>> },
): { tag: string; source: Record<string, unknown> } {
  if (!isObject(source)) throw invalid(`${path}: Input should be a valid dictionary or object to extract fields from`);
  const tag = source.type;
  if (typeof tag !== "string" || !(tag in kinds))
    throw invalid(
      `${path}: Input tag '${String(tag)}' found using 'type' does not match any of the expected tags: ${Object.keys(
        kinds,
      )
        .map((k) => `'${k}'`)
        .join(", ")}`,
    );
  const at = `${path}.${tag}`;
  checkFields(source, { fields: kinds[tag], path: at });
  for (const key of ["data", "url", "file_id"])
    if (key in source && typeof source[key] !== "string") throw invalid(`${at}.${key}: Input should be a valid string`);
  return { tag, source };
}

function checkImage(block: WireBlock, path: string): void {
  tagged(block.source, { path: `${path}.image.source`, kinds: IMAGE_SOURCES });
}

/**
 * A base64 PDF's data is a PDF: not empty, base64 throughout, and its bytes start with the `%PDF-`
 * header. Source: https://platform.claude.com/docs/en/build-with-claude/pdf-support (standard PDFs
 * only). Wording of the invalid case from the API as reported (anthropics/claude-code#5174); of the
 * empty case ours. The whole string is checked against the base64 alphabet (base64Problem); only
 * the first bytes are decoded.
 */
function checkPdfData(data: string, path: string): void {
  if (data === "") throw invalid(`${path}: The PDF specified is empty`);
  const notValid = invalid(`${path}: The PDF specified was not valid.`);
  if (base64Problem(data)) throw notValid;
  let head = "";
  try {
    head = atob(data.slice(0, 8));
  } catch {
    // Not base64 at all: not a PDF either.
  }
  if (!head.startsWith("%PDF-")) throw notValid;
}

function checkDocument(block: WireBlock, path: string): void {
  const at = `${path}.document.source`;
  const { tag, source } = tagged(block.source, { path: at, kinds: DOCUMENT_SOURCES });
  if (tag in DOCUMENT_MEDIA)
    literal(source.media_type, { path: `${at}.${tag}.media_type`, values: [DOCUMENT_MEDIA[tag]] });
  if (tag === "base64") checkPdfData(source.data as string, `${at}.base64.data`);
  if (tag !== "content" || typeof source.content === "string") return;
  if (!Array.isArray(source.content))
    throw invalid(`${at}.content.content: Input should be a valid string or a valid list`);
  for (const [k, inner] of (source.content as WireBlock[]).entries()) {
    const innerPath = `${at}.content.content.${k}`;
    if (!isObject(inner) || (inner.type !== "text" && inner.type !== "image"))
      throw invalid(
        `${innerPath}: Input tag '${String(isObject(inner) ? inner.type : inner)}' found using 'type' does not match any of the expected tags: 'text', 'image'`,
      );
    // Fields, text and cache_control as on the same block at any other level (fields.ts).
    checkContentSourceBlock(inner, innerPath);
    if (inner.type === "image") checkImage(inner, innerPath);
  }
}

export const blockSources: Rule = ({ request }) => {
  for (const at of eachBlock(request))
    for (const { block, path } of [{ block: at.block, path: at.path }, ...nestedBlocks(at)]) {
      if (block.type === "image") checkImage(block, path);
      if (block.type === "document") checkDocument(block, path);
    }
};
