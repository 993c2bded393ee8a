/**
 * The request rules in the order they run. The real API reports one problem per response and its
 * order is not documented; here the body's own fields come first, then the model's limits, the
 * tools, the content and the pairing of calls and results. Each rule throws ApiError (errors.ts).
 */
import { checkBreakpoints } from "../cache";
import type { Counter } from "../counting";
import { citationsWithJsonOutputs, documentCitationsUniform, searchResultCitationsUniform } from "./citations";
import { contextManagement, mcpServers, mcpToolsetReferences } from "./beta-config";
import type { RuleContext, Rule } from "./context";
import { blockFields, bodyFields, configFields } from "./fields";
import { imageCount, imageData } from "./images";
import {
  cacheControlOnEmptyText,
  contentNotEmpty,
  manualThinkingFirst,
  messagesLimit,
  messagesNotEmpty,
  noCitationsInUser,
  noDocumentInAssistant,
  prefill,
  prefillTrailingWhitespace,
  prefillWithJsonOutputs,
  textNotEmpty,
} from "./messages";
import { blockRoles, serverToolPairing, toolResultPairing, toolUseIdPattern, toolUseIdsUnique } from "./pairing";
import {
  effortLevel,
  fastMode,
  forcedToolChoice,
  forcedToolChoiceThinking,
  maxTokensCap,
  maxTokensZero,
  samplingRemoved,
  thinkingBudget,
  thinkingDisplay,
  thinkingOffEffort,
  thinkingType,
} from "./request";
import { citationsIntact, searchResultsIntact } from "./server-results";
import { blockSources } from "./sources";
import { strictSchemaLimits } from "./strict-schemas";
import {
  bodyValues,
  forcedToolKnown,
  inferenceGeo,
  toolChoiceNeedsTools,
  toolDescription,
  toolUseInput,
} from "./values";
import {
  notAllDeferred,
  serverToolModel,
  serverToolParameters,
  strictToolLimit,
  toolInputSchema,
  toolNamePattern,
  toolNamesUnique,
  toolTypes,
} from "./tools";

/** Prompt-caching breakpoints (count and ttl order), from cache.ts. Source: https://platform.claude.com/docs/en/build-with-claude/prompt-caching */
const cacheBreakpoints: Rule = ({ request }) => void checkBreakpoints(request, { ratio: 1 } satisfies Counter);

export const RULES: readonly Rule[] = [
  samplingRemoved,
  bodyFields,
  configFields,
  contextManagement,
  mcpServers,
  blockFields,
  blockSources,
  bodyValues,
  inferenceGeo,
  fastMode,
  maxTokensCap,
  maxTokensZero,
  thinkingType,
  thinkingDisplay,
  thinkingBudget,
  effortLevel,
  thinkingOffEffort,
  toolTypes,
  mcpToolsetReferences,
  toolNamePattern,
  toolInputSchema,
  toolDescription,
  toolNamesUnique,
  notAllDeferred,
  strictToolLimit,
  strictSchemaLimits,
  serverToolModel,
  serverToolParameters,
  toolChoiceNeedsTools,
  forcedToolChoice,
  forcedToolKnown,
  forcedToolChoiceThinking,
  messagesNotEmpty,
  messagesLimit,
  contentNotEmpty,
  cacheControlOnEmptyText,
  textNotEmpty,
  noCitationsInUser,
  noDocumentInAssistant,
  documentCitationsUniform,
  citationsWithJsonOutputs,
  searchResultCitationsUniform,
  imageCount,
  imageData,
  toolUseIdPattern,
  toolUseIdsUnique,
  toolUseInput,
  blockRoles,
  toolResultPairing,
  serverToolPairing,
  manualThinkingFirst,
  searchResultsIntact,
  citationsIntact,
  cacheBreakpoints,
  prefill,
  prefillWithJsonOutputs,
  prefillTrailingWhitespace,
];

export function validateRequest(context: RuleContext): void {
  for (const rule of RULES) rule(context);
}

export type { Endpoint, RuleContext } from "./context";
export { checkShape } from "./shape";
