/**
 * Tool calls and their results, read on the merged conversation (consecutive same-role messages
 * are one turn, not an error): every client tool_use is answered by a tool_result at the start of
 * the next turn, every tool_result answers a tool_use of the turn before, ids are unique and well
 * formed, and every server_tool_use has its result block in the same assistant turn.
 * Paths use the indexes as sent.
 */
import { invalid } from "../errors";
import type { WireBlock } from "../wire";
import { eachBlock, isObject, mergedTurns, type Rule } from "./context";

const ID_PATTERN = /^[a-zA-Z0-9_-]+$/;

/** Source: https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls (wording from the API). */
export const toolUseIdPattern: Rule = ({ request }) => {
  for (const at of eachBlock(request)) {
    if (at.block.type === "tool_use" && (typeof at.block.id !== "string" || !ID_PATTERN.test(at.block.id))) {
      throw invalid(`${at.path}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
    }
  }
};

/** tool_use ids are unique in the request. Source: https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls (wording from the API, anthropics/claude-code#21317). */
export const toolUseIdsUnique: Rule = ({ request }) => {
  const seen = new Set<string>();
  for (const at of eachBlock(request)) {
    if (at.block.type !== "tool_use") continue;
    const id = String(at.block.id);
    if (seen.has(id)) throw invalid(`${at.path}: \`tool_use\` ids must be unique`);
    seen.add(id);
  }
};

/**
 * Each tool_use needs a tool_result at the very start of the next turn (results first, text after),
 * and each tool_result a tool_use in the previous turn. Source:
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls ("tool_result blocks
 * must come FIRST"; results must immediately follow their tool use). Wording from the API.
 */
export const toolResultPairing: Rule = ({ request }) => {
  const turns = mergedTurns(request);
  for (const [t, turn] of turns.entries()) {
    if (turn.role === "assistant" && t < turns.length - 1) {
      const next = turns[t + 1];
      const leading = new Set<string>();
      for (const at of next.blocks) {
        if (at.block.type !== "tool_result") break;
        leading.add(String(at.block.tool_use_id));
      }
      // One result per call. Wording from the API as reported (clients dedupe results to avoid this 400).
      const answered = new Set<string>();
      for (const at of next.blocks) {
        if (at.block.type !== "tool_result") continue;
        const id = String(at.block.tool_use_id);
        if (answered.has(id))
          throw invalid(
            `messages.${at.i}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`,
          );
        answered.add(id);
      }
      const missing = turn.blocks.filter((at) => at.block.type === "tool_use" && !leading.has(String(at.block.id)));
      if (missing.length > 0) {
        const ids = missing.map((at) => String(at.block.id)).join(", ");
        throw invalid(
          `messages.${missing[0].i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
    }
    if (turn.role === "user") {
      const previous = t > 0 && turns[t - 1].role === "assistant" ? turns[t - 1].blocks : [];
      const calls = new Set(previous.filter((at) => at.block.type === "tool_use").map((at) => String(at.block.id)));
      for (const at of turn.blocks) {
        if (at.block.type === "tool_result" && !calls.has(String(at.block.tool_use_id))) {
          throw invalid(
            `${at.path}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(at.block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          );
        }
      }
    }
  }
};

/** Blocks only the model writes (calls, server results) sit in assistant messages; tool results in user ones. */
const ASSISTANT_ONLY = new Set([
  "tool_use",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
]);

/**
 * A block in the wrong role's message. Source: https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls
 * (results go in a user message, calls come from the assistant). Wording from the API as reported
 * for tool_result; the same form, ours, for the assistant's blocks.
 */
export const blockRoles: Rule = ({ request }) => {
  for (const at of eachBlock(request)) {
    if (at.message.role === "assistant" && at.block.type === "tool_result")
      throw invalid(`messages.${at.i}: \`tool_result\` blocks can only be in \`user\` messages`);
    if (at.message.role === "user" && ASSISTANT_ONLY.has(at.block.type))
      throw invalid(`messages.${at.i}: \`${at.block.type}\` blocks can only be in \`assistant\` messages`);
  }
};

const RESULT_OF: Record<string, string> = {
  web_search: "web_search_tool_result",
  web_fetch: "web_fetch_tool_result",
  code_execution: "code_execution_tool_result",
  bash_code_execution: "bash_code_execution_tool_result",
  text_editor_code_execution: "text_editor_code_execution_tool_result",
  tool_search_tool_regex: "tool_search_tool_result",
  tool_search_tool_bm25: "tool_search_tool_result",
};
const TOOL_PREFIX: Record<string, string> = { web_search: "web_search_", web_fetch: "web_fetch_" };

/**
 * A server_tool_use is followed by its result block in the same assistant turn. Two documented
 * exceptions: the paused turn resent as the last message (pause_turn; the tool must still be
 * defined), and a turn that also calls client tools, whose deferred result opens a later turn.
 * Sources: https://platform.claude.com/docs/en/agents-and-tools/tool-use/server-tools,
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/troubleshooting-tool-use (wording).
 */
export const serverToolPairing: Rule = ({ request }) => {
  const turns = mergedTurns(request);
  const tools = (request.tools ?? []) as unknown[];
  const defines = (name: string) =>
    tools.some(
      (tool) =>
        isObject(tool) && (tool.name === name || String(tool.type ?? "").startsWith(TOOL_PREFIX[name] ?? "\u0000")),
    );
  for (const [t, turn] of turns.entries()) {
    if (turn.role !== "assistant") continue;
    for (const [k, at] of turn.blocks.entries()) {
      if (at.block.type !== "server_tool_use") continue;
      const name = String(at.block.name);
      const resultType = RESULT_OF[name] ?? `${name}_tool_result`;
      const answered = (blocks: { block: WireBlock }[]) =>
        blocks.some(({ block }) => block.type === resultType && block.tool_use_id === at.block.id);
      if (answered(turn.blocks.slice(k + 1))) continue;
      const unanswered = `messages.${at.i}: \`${name}\` tool use with id \`${String(at.block.id)}\` was found without a corresponding \`${resultType}\` block`;
      if (t === turns.length - 1) {
        if (!defines(name)) throw invalid(`${unanswered}, but no ${name} tool was provided`);
        continue;
      }
      const callsClientTools = turn.blocks.slice(k + 1).some(({ block }) => block.type === "tool_use");
      const later = turns.slice(t + 1).filter((other) => other.role === "assistant");
      if (callsClientTools && later.some((other) => answered(other.blocks))) continue;
      throw invalid(unanswered);
    }
  }
};
