/**
 * The Models API (https://platform.claude.com/docs/en/api/models/list, …/models/retrieve):
 * `GET /v1/models` pages through the catalog, newest release first (`data`, `has_more`, `first_id`,
 * `last_id`; `limit` 1–1000, default 20; `after_id` / `before_id`; `lifecycle` filter, by default
 * active and deprecated models only, retired ones when asked), and `GET /v1/models/{id}` answers one
 * model, a retired one included, or 404. Each answer has the SDK's ModelInfo shape. Legacy models are
 * `active` there; a deprecated model past its retirement day is `retired`. Test models `offline-<N>k`
 * are retrievable for any N from 1 to 2000; the list shows two of them.
 *
 * Capabilities describe what the offline model does: code execution and context management are
 * reported unsupported because the stand-in implements neither.
 */
import { EFFORT_LEVELS, MODELS, RETIRED_MODELS, type ModelEntry } from "../models/catalog";
import { findModel, utcDay } from "../models/lookup";
import { ApiError, invalid } from "./errors";
import { RELEASED, RETIRED_DEPRECATED_ON } from "./model-dates";
import { testModelEntry } from "./model";

type Lifecycle = "active" | "deprecated" | "retired";
const LISTED_TEST_MODELS = ["offline-20k", "offline-200k"];
const EPOCH = "1970-01-01T00:00:00Z";
const at = (day: string | undefined | null) => (day ? `${day}T00:00:00Z` : null);
const support = (supported: boolean) => ({ supported });

function capabilities(entry: ModelEntry) {
  const accepts = entry.thinking.accepts;
  const thinks = accepts.some((type) => type !== "disabled");
  const levels = entry.effort?.levels ?? [];
  return {
    batch: support(true),
    citations: support(true),
    code_execution: support(false),
    context_management: {
      supported: false,
      clear_thinking_20251015: null,
      clear_tool_uses_20250919: null,
      compact_20260112: null,
    },
    effort: {
      supported: entry.effort !== null,
      ...Object.fromEntries(EFFORT_LEVELS.map((level) => [level, support(levels.includes(level))])),
    },
    image_input: support(true),
    pdf_input: support(true),
    server_tools: {
      supported: entry.serverTools.length > 0,
      web_search: support(entry.serverTools.includes("web_search")),
      code_execution: support(false),
    },
    structured_outputs: support(true),
    thinking: {
      supported: thinks,
      types: {
        adaptive: support(accepts.includes("adaptive")),
        between_tools: support(accepts.includes("between_tools")),
        disabled: support(accepts.includes("disabled") || !thinks),
        enabled: support(accepts.includes("enabled")),
      },
    },
  };
}

interface ModelInfo {
  type: "model";
  id: string;
  display_name: string;
  created_at: string;
  lifecycle: Lifecycle;
  deprecated_at: string | null;
  retires_at: string | null;
  line: ModelEntry["line"];
  max_input_tokens: number | null;
  max_tokens: number | null;
  capabilities: ReturnType<typeof capabilities> | null;
}

function info(entry: ModelEntry, lifecycle: Lifecycle): ModelInfo {
  const released = RELEASED[entry.id];
  return {
    type: "model",
    id: entry.id,
    display_name: entry.name,
    created_at: at(released) ?? EPOCH,
    lifecycle,
    deprecated_at: lifecycle === "active" ? null : at(entry.deprecatedOn),
    retires_at: lifecycle === "active" ? null : at(entry.retiresOn),
    line: entry.line,
    max_input_tokens: entry.contextWindow,
    max_tokens: entry.maxOutput,
    capabilities: lifecycle === "retired" ? null : capabilities(entry),
  };
}

function retiredInfo(
  id: string,
  {
    name,
    retiredOn,
    deprecatedOn,
    line,
  }: { name: string; retiredOn: string; deprecatedOn: string | undefined; line: ModelInfo["line"] },
): ModelInfo {
  return {
    type: "model",
    id,
    display_name: name,
    created_at: at(RELEASED[id] ?? /(\d{4})(\d{2})(\d{2})$/.exec(id)?.slice(1).join("-")) ?? EPOCH,
    lifecycle: "retired",
    deprecated_at: at(deprecatedOn),
    retires_at: at(retiredOn),
    line,
    max_input_tokens: null,
    max_tokens: null,
    capabilities: null,
  };
}

/** Every model the API knows on `day`, newest first. */
function catalog(day: string): ModelInfo[] {
  const all: ModelInfo[] = [];
  for (const entry of MODELS) {
    const found = findModel(entry.id, day);
    if (found.kind === "retired")
      all.push(
        retiredInfo(entry.id, {
          name: entry.name,
          retiredOn: found.retiredOn,
          deprecatedOn: entry.deprecatedOn,
          line: entry.line,
        }),
      );
    else all.push(info(entry, entry.status === "deprecated" ? "deprecated" : "active"));
  }
  for (const gone of RETIRED_MODELS) {
    const line = (["haiku", "sonnet", "opus"] as const).find((l) => gone.id.includes(l)) ?? null;
    all.push(
      retiredInfo(gone.id, {
        name: gone.name,
        retiredOn: gone.retiredOn,
        deprecatedOn: RETIRED_DEPRECATED_ON[gone.id],
        line,
      }),
    );
  }
  for (const id of LISTED_TEST_MODELS) all.push(info(testModelEntry(id)!, "active"));
  return all.sort((a, b) =>
    a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? -1 : 1,
  );
}

/** GET /v1/models/{id} (an alias answers its model). */
export function retrieveModel(id: string, day: string = utcDay()): ModelInfo {
  const test = testModelEntry(id);
  if (test) return info(test, "active");
  const found = findModel(id, day);
  if (found.kind === "unknown") throw new ApiError(404, "not_found_error", `model: ${id}`);
  if (found.kind === "current") return info(found.entry, found.entry.status === "deprecated" ? "deprecated" : "active");
  const listed = catalog(day).find((m) => m.id === found.id);
  if (!listed) throw new ApiError(404, "not_found_error", `model: ${id}`);
  return listed;
}

/** GET /v1/models with its query. */
export function listModels(query: URLSearchParams, day: string = utcDay()) {
  const asked = [...query.getAll("lifecycle[]"), ...query.getAll("lifecycle")].flatMap((v) => v.split(","));
  for (const [n, value] of asked.entries()) {
    if (!["active", "deprecated", "retired"].includes(value))
      throw invalid(`lifecycle.${n}: Input should be 'active', 'deprecated' or 'retired'`);
  }
  const lifecycles = asked.length > 0 ? asked : ["active", "deprecated"];
  const limitText = query.get("limit");
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit)) throw invalid("limit: Input should be a valid integer");
  if (limit < 1) throw invalid("limit: Input should be greater than or equal to 1");
  if (limit > 1000) throw invalid("limit: Input should be less than or equal to 1000");
  const models = catalog(day).filter((m) => lifecycles.includes(m.lifecycle));
  const after = query.get("after_id");
  const before = query.get("before_id");
  let page: ModelInfo[];
  let hasMore: boolean;
  if (before !== null) {
    const end = models.findIndex((m) => m.id === before);
    const start = Math.max(0, Math.max(end, 0) - limit);
    page = end < 0 ? [] : models.slice(start, end);
    hasMore = start > 0;
  } else {
    const start = after === null ? 0 : models.findIndex((m) => m.id === after) + 1;
    page = after !== null && start === 0 ? [] : models.slice(start, start + limit);
    hasMore = start + limit < models.length && page.length > 0;
  }
  return { data: page, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page[page.length - 1]?.id ?? null };
}
