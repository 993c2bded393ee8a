/**
 * The values of known fields, where fields.ts checks only their names: the body's enums and types,
 * a custom tool's description, a tool call's input, and a tool_choice with no tool to choose.
 * Messages are the request schema's own (`<path>: Input should be ...`), as the API's validation
 * words them for every other field. Sources: https://platform.claude.com/docs/en/api/messages (the
 * schema; the pinned SDK's MessageCreateParams: service_tier 'auto' | 'standard_only', speed
 * 'standard' | 'fast' | null, stop_sequences Array<string>, Metadata.user_id string | null of at
 * most 256 characters (https://platform.claude.com/docs/en/api/messages#metadata: maxLength 256),
 * OutputConfig.format JSONOutputFormat, inference_geo string | null), and each rule's own below.
 */
import { invalid } from "../errors";
import { eachBlock, isObject, literal, type Rule } from "./context";

const USER_ID_MAX = 256;

/** The body's scalar fields and lists. */
export const bodyValues: Rule = ({ body }) => {
  literal(body.service_tier, { path: "service_tier", values: ["auto", "standard_only"] });
  literal(body.speed, { path: "speed", values: ["standard", "fast"], nullable: true });
  if (body.stream !== undefined && typeof body.stream !== "boolean")
    throw invalid("stream: Input should be a valid boolean");
  if (body.stop_sequences !== undefined) {
    if (!Array.isArray(body.stop_sequences)) throw invalid("stop_sequences: Input should be a valid list");
    for (const [i, s] of body.stop_sequences.entries()) {
      if (typeof s !== "string") throw invalid(`stop_sequences.${i}: Input should be a valid string`);
      // As the API words it (BerriAI/litellm#3286, MegaGrindStone/mcp-web-ui#5).
      if (s === "") throw invalid("stop_sequences: each stop sequence must be non-empty");
      if (s.trim() === "") throw invalid("stop_sequences: each stop sequence must contain non-whitespace");
    }
  }
  if (isObject(body.metadata) && body.metadata.user_id !== undefined && body.metadata.user_id !== null) {
    const id = body.metadata.user_id;
    if (typeof id !== "string") throw invalid("metadata.user_id: Input should be a valid string");
    // The API reference's Metadata.user_id has maxLength 256 (the SDK's type does not say); counted
    // in code points, as pydantic (whose wording the message is) counts a string's length.
    if ([...id].length > USER_ID_MAX)
      throw invalid(`metadata.user_id: String should have at most ${USER_ID_MAX} characters`);
  }
  const format = isObject(body.output_config) ? body.output_config.format : undefined;
  if (format !== undefined && format !== null) {
    if (!isObject(format))
      throw invalid("output_config.format: Input should be a valid dictionary or object to extract fields from");
    if (format.type !== "json_schema")
      throw invalid(
        `output_config.format: Input tag '${String(format.type)}' found using 'type' does not match any of the expected tags: 'json_schema'`,
      );
    if (!isObject(format.schema))
      throw invalid(
        "output_config.format.json_schema.schema: Input should be a valid dictionary or object to extract fields from",
      );
  }
};

/** The values the data-residency page lists for `inference_geo`. */
export const INFERENCE_GEOS = ["global", "us"] as const;

/**
 * `inference_geo` only on a model that takes it (Claude Opus 4.6 and later: the catalog's
 * `inferenceGeo`), and only a listed value; null is the SDK's "not set". Source:
 * https://platform.claude.com/docs/en/build-with-claude/data-residency ("Requests with inference_geo on legacy models return a 400 error"; values "global" and "us").
 * The docs give no wording: the refusals' text is ours, in the schema's form. count_tokens takes
 * no `inference_geo` at all (bodyFields).
 */
export const inferenceGeo: Rule = ({ body, model }) => {
  const geo = body.inference_geo;
  if (geo === undefined || geo === null) return;
  if (typeof geo !== "string") throw invalid("inference_geo: Input should be a valid string");
  if (model.inferenceGeo !== true) throw invalid(`inference_geo: "${geo}" is not supported for this model.`);
  literal(geo, { path: "inference_geo", values: INFERENCE_GEOS });
};

/** A custom tool's description is a string. */
export const toolDescription: Rule = ({ body }) => {
  for (const [n, tool] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    if (!isObject(tool) || (tool.type !== undefined && tool.type !== null && tool.type !== "custom")) continue;
    if (tool.description !== undefined && typeof tool.description !== "string")
      throw invalid(`tools.${n}.custom.description: Input should be a valid string`);
  }
};

/** A tool call's `input` is an object (the SDK's `input: { [key: string]: unknown }`). */
export const toolUseInput: Rule = ({ request }) => {
  for (const at of eachBlock(request)) {
    if ((at.block.type === "tool_use" || at.block.type === "server_tool_use") && !isObject(at.block.input))
      throw invalid(`${at.path}.${at.block.type}.input: Input should be a valid dictionary`);
  }
};

/**
 * A tool_choice of `auto`, `any` or `tool` needs at least one tool. Source:
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools (tool_choice picks among
 * the tools given); wording from the API as reported (clients strip tool_choice to avoid this 400).
 * `none` with no tools is taken: the reports seen name the other types, so the stand-in is lenient.
 */
export const toolChoiceNeedsTools: Rule = ({ body }) => {
  if (!isObject(body.tool_choice) || body.tool_choice.type === "none") return;
  if (Array.isArray(body.tools) && body.tools.length > 0) return;
  throw invalid(`tool_choice.${String(body.tool_choice.type)} may only be specified while providing tools`);
};

/**
 * A forced tool (`tool_choice: {type: "tool", name}`) is one of the request's tools. Source:
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools (`tool` "forces Claude
 * to always use a particular tool" among those provided). Wording ours: the docs do not give it.
 */
export const forcedToolKnown: Rule = ({ body }) => {
  if (!isObject(body.tool_choice) || body.tool_choice.type !== "tool") return;
  const name = body.tool_choice.name;
  if (typeof name !== "string") return; // configFields refuses a non-string name
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (!tools.some((tool) => isObject(tool) && tool.name === name))
    throw invalid(`tool_choice.tool.name: "${name}" does not match the name of any tool in tools`);
};
