// An imported message's content against what the Messages API refuses once it is stored and
// replayed: blank text, a tool_result with nothing readable in it. The person's side (user text,
// tool results) is refused, naming the block, because only the importer can say what was meant.
// Blank text in an assistant message is the model's own artifact (the API itself sometimes emits
// an empty text block, and this platform drops them when it saves a reply, core/coalesce.ts), so
// it is left out as it is at save; a message left with nothing is refused.
import { BLANK_TEXT_MESSAGE, isBlankText } from "../blank-text";
import type { ContentBlock, ImageBlock, Role, TextBlock } from "../types";

export type ContentCheck = { ok: true; content: ContentBlock[] } | { ok: false; problem: string };

function resultProblem(content: string | Array<TextBlock | ImageBlock>, at: string): string | null {
  if (typeof content === "string") return isBlankText(content) ? `${at}: ${BLANK_TEXT_MESSAGE}` : null;
  if (!content.length) return `${at}: must hold at least one block`;
  for (const [k, inner] of content.entries()) {
    if (inner.type === "text" && isBlankText(inner.text)) return `${at}.${k}.text: ${BLANK_TEXT_MESSAGE}`;
  }
  return null;
}

/** The content to store, or the first problem, named from `where` ("messages[3]", "line 4"). */
export function checkImportedContent(role: Role, content: readonly ContentBlock[], where: string, fromString: boolean): ContentCheck {
  const kept: ContentBlock[] = [];
  for (const [j, b] of content.entries()) {
    const at = fromString ? `${where}.content` : `${where}.content.${j}`;
    let problem: string | null = null;
    if (b.type === "text" && isBlankText(b.text)) {
      if (role === "assistant") continue;
      problem = `${fromString ? at : `${at}.text`}: ${BLANK_TEXT_MESSAGE}`;
    } else if (b.type === "tool_result") problem = resultProblem(b.content, `${at}.content`);
    if (problem) return { ok: false, problem };
    kept.push(b);
  }
  if (!kept.length) return { ok: false, problem: `${where}.content: ${BLANK_TEXT_MESSAGE}` };
  return { ok: true, content: kept };
}
