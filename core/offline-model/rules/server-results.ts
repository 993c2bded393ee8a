/**
 * Server tool output sent back must be as it was received: each web search result's
 * `encrypted_content` and each web search citation's `encrypted_index`. Source:
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool ("If encrypted_content
 * is missing or modified, the request fails with a 400 validation error"; encrypted_index "must be
 * passed back"). Wording for encrypted_content from the API (code-yeongyu/senpi#150); for
 * encrypted_index ours.
 */
import { invalid } from "../errors";
import { citationValid, searchResultValid } from "../server-tools";
import type { WireBlock } from "../wire";
import { eachBlock, isObject, type Rule } from "./context";

export const searchResultsIntact: Rule = ({ request }) => {
  for (const at of eachBlock(request)) {
    if (at.block.type !== "web_search_tool_result" || !Array.isArray(at.block.content)) continue;
    for (const item of at.block.content as WireBlock[]) {
      if (isObject(item) && item.type === "web_search_result" && !searchResultValid(item))
        throw invalid(`${at.path}: Invalid encrypted_content in search_result block`);
    }
  }
};

export const citationsIntact: Rule = ({ request }) => {
  for (const at of eachBlock(request)) {
    if (at.message.role !== "assistant" || at.block.type !== "text" || !Array.isArray(at.block.citations)) continue;
    for (const citation of at.block.citations as unknown[]) {
      if (isObject(citation) && citation.type === "web_search_result_location" && !citationValid(citation)) {
        throw invalid(`${at.path}: Invalid encrypted_index in web_search_result_location citation`);
      }
    }
  }
};
