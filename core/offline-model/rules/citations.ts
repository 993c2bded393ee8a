/**
 * Citations are all-or-nothing across a request, separately for documents and for search results:
 * every document block (top level or inside a tool_result) has them enabled or none does, and the
 * same for search_result blocks. An omitted or null config, or `enabled` other than true, is
 * disabled. The message names the first block that disagrees with the first of its type.
 * Sources: https://platform.claude.com/docs/en/build-with-claude/citations ("Currently, citations
 * must be enabled on all or none of the documents within a request.") and
 * https://platform.claude.com/docs/en/build-with-claude/search-results ("Citations are all-or-nothing
 * … Mixing search results with different citation settings results in an error."). Wording ours:
 * the docs name the refusal, not its text. Documents inside server tool results (web fetch) are not
 * counted: the pages speak of the documents the request supplies.
 */
import { invalid } from "../errors";
import type { WireBlock } from "../wire";
import { eachBlock, isObject, nestedBlocks, type Rule, type RuleContext } from "./context";

const citing = (block: WireBlock) => isObject(block.citations) && block.citations.enabled === true;

function allOrNone({ request }: RuleContext, { type, noun }: { type: string; noun: string }): void {
  let first: boolean | undefined;
  for (const at of eachBlock(request)) {
    for (const { block, path } of [{ block: at.block, path: at.path }, ...nestedBlocks(at)]) {
      if (block.type !== type) continue;
      first ??= citing(block);
      if (citing(block) !== first)
        throw invalid(
          `${path}.${type}.citations: citations must be enabled on all or none of the ${noun} within a request`,
        );
    }
  }
}

export const documentCitationsUniform: Rule = (context) => allOrNone(context, { type: "document", noun: "documents" });

export const searchResultCitationsUniform: Rule = (context) =>
  allOrNone(context, { type: "search_result", noun: "search results" });

/**
 * Citations and JSON outputs do not mix: "Returns 400 error if citations enabled with
 * `output_config.format`" (https://platform.claude.com/docs/en/build-with-claude/structured-outputs,
 * Feature compatibility). Any document or search_result block citing, at any depth the rules above
 * count, refuses a request with a format. Wording ours.
 */
export const citationsWithJsonOutputs: Rule = ({ body, request }) => {
  const format = (body.output_config as { format?: unknown } | null | undefined)?.format;
  if (format === undefined || format === null) return;
  for (const at of eachBlock(request))
    for (const { block, path } of [{ block: at.block, path: at.path }, ...nestedBlocks(at)])
      if ((block.type === "document" || block.type === "search_result") && citing(block))
        throw invalid(`${path}.${block.type}.citations: citations cannot be enabled when output_config.format is set`);
};
