// An imported message's content against what the Messages API refuses once it is stored and
// replayed: blank text, a tool_result with nothing readable in it, an image over the API's limits
// (core/image-limits.ts). The person's side (user text, tool results) is refused, naming the
// block, because only the importer can say what was meant. Blank text in an assistant message is
// the model's own artifact (the API itself sometimes emits an empty text block, and this platform
// drops them when it saves a reply, core/coalesce.ts), so it is left out as it is at save; a
// message left with nothing is refused.
import { BLANK_TEXT_MESSAGE, isBlankText } from "../blank-text";
import { checkBase64Image } from "../image-limits";
import type { ContentBlock, ImageBlock, Role, TextBlock } from "../types";

export type ContentCheck = { ok: true; content: ContentBlock[] } | { ok: false; problem: string };

function imageProblem(b: ImageBlock, at: string): string | null {
  if (b.source.type !== "base64") return null;
  const check = checkBase64Image(b.source.media_type, b.source.data);
  return check.ok ? null : `${at}.source.data: ${check.problem}`;
}

function resultProblem(content: string | Array<TextBlock | ImageBlock>, at: string): string | null {
  if (typeof content === "string") return isBlankText(content) ? `${at}: ${BLANK_TEXT_MESSAGE}` : null;
  if (!content.length) return `${at}: must hold at least one block`;
  for (const [k, inner] of content.entries()) {
    const problem =
      inner.type === "text"
        ? isBlankText(inner.text)
          ? `${at}.${k}.text: ${BLANK_TEXT_MESSAGE}`
          : null
        : imageProblem(inner, `${at}.${k}`);
    if (problem) return problem;
  }
  return null;
}

/** The content to store, or the first problem, named from `where` ("messages[3]", "line 4"). */
export function checkImportedContent(
  role: Role,
  { content, where, fromString }: { content: readonly ContentBlock[]; where: string; fromString: boolean },
): ContentCheck {
  const kept: ContentBlock[] = [];
  for (const [j, b] of content.entries()) {
    const at = fromString ? `${where}.content` : `${where}.content.${j}`;
    let problem: string | null = null;
    if (b.type === "text" && isBlankText(b.text)) {
      if (role === "assistant") continue;
      problem = `${fromString ? at : `${at}.text`}: ${BLANK_TEXT_MESSAGE}`;
    } else if (b.type === "image") problem = imageProblem(b, at);
    else if (b.type === "tool_result") problem = resultProblem(b.content, `${at}.content`);
    if (problem) return { ok: false, problem };
    kept.push(b);
  }
  if (!kept.length) return { ok: false, problem: `${where}.content: ${BLANK_TEXT_MESSAGE}` };
  return { ok: true, content: kept };
}
