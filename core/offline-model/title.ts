/**
 * Title requests. The offline model reads them from what the real prompt says, as a real model
 * would: the system prompt's first sentence asks for a title ("… title for this conversation …").
 * The answer is deterministic, so tests can assert it: the first words (at most six) of the user's
 * first message as the request quotes it (`<first_message>` … `</first_message>`, else the whole
 * user text), directive lines left out, trailing punctuation dropped, the first letter upper case.
 */
import { stripDirectives } from "./directives";
import { systemText, textOf, type WireRequest } from "./wire";

const ASKS_FOR_TITLE = /\btitle\b[^.!?\n]*\bconversation\b/i;
const QUOTED_FIRST = /<first_message>\n?([\s\S]*?)\n?<\/first_message>/;
export const OFFLINE_TITLE_WORDS = 6;

function openingSentence(system: string): string {
  const text = system.trimStart();
  const end = text.search(/[.!?](?:\s|$)|\n/);
  return end < 0 ? text : text.slice(0, end);
}

export function asksForTitle(request: Pick<WireRequest, "system">): boolean {
  return ASKS_FOR_TITLE.test(openingSentence(systemText(request.system)));
}

/** The deterministic title of a title request ("Untitled" when the quoted message has no words). */
export function offlineTitle(request: Pick<WireRequest, "messages">): string {
  const user = request.messages
    .filter((m) => m.role === "user")
    .map(textOf)
    .join("\n");
  const quoted = QUOTED_FIRST.exec(user)?.[1] ?? user;
  const words = stripDirectives(quoted)
    .replace(/\s+/g, " ")
    .trim()
    .split(" ")
    .filter(Boolean)
    .slice(0, OFFLINE_TITLE_WORDS);
  const title = withoutTrailing(words.join(" ")).replace(/^[\s"'`*_#-]+/, "");
  return title === "" ? "Untitled" : title[0].toUpperCase() + title.slice(1);
}

const TRAILING = /[\s.,;:!?"'`*_#-]/;

/**
 * The text without its trailing whitespace and punctuation, found from the end: the regex
 * /[\s.,;:!?"'`*_#-]+$/ cuts the same but retried from every character of a long run of them
 * followed by another character, quadratically (a 40,000-character run: 3.8 s).
 */
function withoutTrailing(text: string): string {
  let end = text.length;
  while (end > 0 && TRAILING.test(text[end - 1])) end--;
  return text.slice(0, end);
}
