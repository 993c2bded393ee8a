// An automation whose turn calls a client tool: no client answers one, so the turn is stopped and
// the run fails once, leaving the channel free. A file of its own (an isolated workerd): its tick's
// continuation through the claims queue must not claim the hourly automations of other tests.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import chat from "../../workers/chat/index";
import { api, eventually, newTenant } from "./helpers";

async function tick(at: number) {
  const ctx = createExecutionContext();
  await chat.scheduled!(createScheduledController({ scheduledTime: at, cron: "*/5 * * * *" }), env as Env, ctx);
  await waitOnExecutionContext(ctx);
}

const runsOf = async (id: string, key: string) =>
  (await api("GET", `/v1/automations/${id}/runs`, undefined, { key })).json.data;
const settled = (runs: Record<string, unknown>[]) =>
  runs.length > 0 && runs.every((r) => !["queued", "running", "retrying"].includes(String(r.status)));

async function createAutomation(key: string, body: Record<string, unknown>) {
  const r = await api(
    "POST",
    "/v1/automations",
    { name: "a", channel: "auto", prompt: "hourly check-in", schedule: "0 * * * *", ...body },
    { key },
  );
  if (r.status !== 201) throw new Error(`${r.status} ${r.text}`);
  return r.json.id as string;
}

const HOUR = Date.parse("2031-05-06T14:00:00Z");

describe("an automation and client tools", () => {
  it("stops a turn that calls a client tool, fails the run once, and leaves the channel free", async () => {
    const key = await newTenant();
    const name = "pick_colour";
    const tool = await api(
      "POST",
      "/v1/tools",
      { kind: "client", name, description: "Asks the user.", inputSchema: { type: "object", properties: {} } },
      { key },
    );
    expect(tool.status, tool.text).toBe(201);
    const id = await createAutomation(key, {
      channel: "asks",
      prompt: `@tool tool_activate {"name":"${name}"}\n@tool ${name} {}`,
    });
    const slot = HOUR + 9 * 3600_000;
    await tick(slot + 60_000);
    const [run] = (await eventually(async () => {
      const r = await runsOf(id, key);
      return settled(r) ? r : null;
    }, 30_000))!;
    expect(run).toMatchObject({ status: "failed", attempts: 1 });
    expect(run.error).toMatch(/^the turn called client tools \(pick_colour\) that no client of an automation answers/);
    // The channel's conversation is not left waiting: a person's post runs.
    const post = await api("POST", "/v1/channels/asks/messages", { content: "hello from a person" }, { key });
    expect(post.status, post.text).toBe(200);
  });
});
