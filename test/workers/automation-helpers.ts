// What the automation tests share: firing the cron trigger, reading an automation's runs,
// creating an hourly automation through the API, a run claimed as the trigger leaves it, a client
// tool for a run's turn to call, and a person's turn on a channel paused on that tool.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import chat from "../../workers/chat/index";
import { api } from "./helpers";

/** The chat worker's cron trigger at `at`, waited for to its end. */
export async function tick(at: number) {
  const ctx = createExecutionContext();
  await chat.scheduled!(createScheduledController({ scheduledTime: at, cron: "*/5 * * * *" }), env as Env, ctx);
  await waitOnExecutionContext(ctx);
}

export const runsOf = async (id: string, key: string) =>
  (await api("GET", `/v1/automations/${id}/runs`, undefined, { key })).json.data;
export const settled = (runs: Record<string, unknown>[]) =>
  runs.length > 0 && runs.every((r) => !["queued", "running", "retrying"].includes(String(r.status)));

/** POST /v1/automations with these fields over an hourly check-in's: the answer as it came. */
export const postAutomation = (key: string, body: Record<string, unknown> = {}) =>
  api(
    "POST",
    "/v1/automations",
    { name: "a", channel: "auto", prompt: "hourly check-in", schedule: "0 * * * *", ...body },
    { key },
  );

export async function createAutomation(key: string, body: Record<string, unknown>) {
  const r = await postAutomation(key, body);
  if (r.status !== 201) throw new Error(`${r.status} ${r.text}`);
  return r.json.id as string;
}

// A fixed hour in the future, so no other test's automation shares its slots.
export const HOUR = Date.parse("2031-05-06T14:00:00Z");

const claimed = new Map<string, number>();

/**
 * An automation on its own channel (`<label>-<n>`) with one claimed run, `queued` with no attempt
 * yet, as the cron trigger leaves it. `label` (letters, at most 20) keeps each file's run ids apart;
 * `year` its slots (an hour each, from that year's start).
 */
export async function claimedRun(
  key: string,
  { prompt, label, year }: { prompt: string; label: string; year: number },
) {
  const n = (claimed.get(label) ?? 0) + 1;
  claimed.set(label, n);
  const channel = `${label}-${n}`;
  const a = await api("POST", "/v1/automations", { name: label, channel, prompt, schedule: "0 0 1 1 *" }, { key });
  if (a.status !== 201) throw new Error(`${a.status} ${a.text}`);
  const tenantId = (await env.DB.prepare(`SELECT tenant_id AS t FROM automations WHERE id = ?`)
    .bind(a.json.id)
    .first<{ t: string }>())!.t;
  const runId = `run_${label}${String(n).padStart(26 - label.length, "0")}`;
  const slot = new Date(Date.parse(`${year}-01-01T00:00:00Z`) + n * 3600_000).toISOString();
  await env.DB.prepare(
    `INSERT INTO automation_runs (id, automation_id, tenant_id, slot, status, queued_at, attempts) VALUES (?, ?, ?, ?, 'queued', ?, 0)`,
  )
    .bind(runId, a.json.id, tenantId, slot, new Date().toISOString())
    .run();
  const run = async () => (await runsOf(a.json.id, key)).find((r) => r.id === runId);
  return { automationId: a.json.id as string, channel, runId, run };
}

/** A client tool of the tenant's, with an empty input schema, for a run's turn to call. */
export async function createClientTool(key: string, name: string): Promise<void> {
  const tool = await api(
    "POST",
    "/v1/tools",
    { kind: "client", name, description: "Asks the user.", inputSchema: { type: "object", properties: {} } },
    { key },
  );
  if (tool.status !== 201) throw new Error(`${tool.status} ${tool.text}`);
}

/**
 * A person's turn on the channel that calls the client tool `tool` (createClientTool) and so
 * pauses: the channel's conversation refuses other turns until it is answered or stopped.
 * Returns the person's turn id and the channel's conversation id.
 */
export async function pauseChannelOnClientTool(
  key: string,
  { channel, tool }: { channel: string; tool: string },
): Promise<{ turnId: string; conversationId: string }> {
  const person = await api(
    "POST",
    `/v1/channels/${channel}/messages`,
    { content: `@tool tool_activate {"name":"${tool}"}\n@tool ${tool} {}` },
    { key },
  );
  const { turnId, conversationId, requires_action: paused } = person.json;
  if (person.status !== 200 || !paused || typeof turnId !== "string" || typeof conversationId !== "string")
    throw new Error(`the channel's turn did not pause: ${person.status} ${person.text}`);
  return { turnId, conversationId };
}
