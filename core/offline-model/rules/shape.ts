/**
 * The request's outline, checked before anything else (the model is not known yet): a JSON object
 * with `model`, `messages` (and `max_tokens` on Messages), each message a role and content. Wording
 * follows the API's schema errors (`<path>: Field required`, `Input should be …`).
 * Source: https://platform.claude.com/docs/en/api/messages (request body).
 */
import { invalid } from "../errors";
import { type Endpoint, isObject } from "./context";

const ROLES = ["user", "assistant", "system"];

export function checkShape(body: unknown, endpoint: Endpoint): asserts body is Record<string, unknown> {
  if (!isObject(body)) throw invalid("Input should be a valid dictionary or object to extract fields from");
  if (body.model === undefined) throw invalid("model: Field required");
  if (typeof body.model !== "string" || body.model === "") throw invalid("model: Input should be a valid string");
  if (endpoint === "messages") {
    if (body.max_tokens === undefined) throw invalid("max_tokens: Field required");
    if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens))
      throw invalid("max_tokens: Input should be a valid integer");
    if (body.max_tokens < 0) throw invalid("max_tokens: Input should be greater than or equal to 0");
  }
  if (body.messages === undefined) throw invalid("messages: Field required");
  if (!Array.isArray(body.messages)) throw invalid("messages: Input should be a valid list");
  for (const [i, message] of body.messages.entries()) {
    if (!isObject(message))
      throw invalid(`messages.${i}: Input should be a valid dictionary or object to extract fields from`);
    if (message.role === undefined) throw invalid(`messages.${i}.role: Field required`);
    if (!ROLES.includes(message.role as string))
      throw invalid(`messages.${i}.role: Input should be 'user', 'assistant' or 'system'`);
    if (message.content === undefined) throw invalid(`messages.${i}.content: Field required`);
    if (typeof message.content !== "string" && !Array.isArray(message.content))
      throw invalid(`messages.${i}.content: Input should be a valid string or a valid list`);
    if (Array.isArray(message.content)) {
      for (const [j, block] of message.content.entries()) {
        if (!isObject(block) || typeof block.type !== "string")
          throw invalid(`messages.${i}.content.${j}: Unable to extract tag using discriminator 'type'`);
      }
    }
  }
  // null too: the schema's system is `string | TextBlockParam[]`, not nullable (the pinned SDK's
  // type), and a null let through here would reach the reply's system-prompt parsing.
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system))
    throw invalid("system: Input should be a valid string or a valid list");
  if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools))
    throw invalid("tools: Input should be a valid list");
}
