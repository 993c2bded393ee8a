// An automation whose turn calls a client tool: no client answers one, so the turn is stopped and
// the run fails once, leaving the channel free. A file of its own (an isolated workerd): its tick's
// continuation through the claims queue must not claim the hourly automations of other tests.
import { describe, expect, it } from "vitest";
import { createAutomation, createClientTool, HOUR, runsOf, settled, tick } from "./automation-helpers";
import { api, eventually, newTenant } from "./helpers";

describe("an automation and client tools", () => {
  it("stops a turn that calls a client tool, fails the run once, and leaves the channel free", async () => {
    const key = await newTenant();
    const name = "pick_colour";
    await createClientTool(key, name);
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
