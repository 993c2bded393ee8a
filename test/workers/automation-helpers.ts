// What the automation tests share: firing the cron trigger, reading an automation's runs, and
// creating an hourly automation through the API.
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
