// An automation run end to end on the running stack: the local scheduled trigger, the claim, the
// automation queue, the channel's conversation, and the recorded run.
import { describe, expect, it } from "vitest";
import { api, base, transcript } from "./client";
import type { Routes } from "../../client";

describe("automations on the running stack", () => {
  it("run when the scheduled trigger fires, once per slot", async () => {
    const channel = `e2e-auto-${Date.now()}`;
    const a = await api("POST", "/v1/automations", {
      name: "hourly",
      schedule: "0 * * * *",
      prompt: "hourly status check",
      channel,
    });
    expect(a.status).toBe(201);
    const fire = () => fetch(`${base()}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("*/5 * * * *")}`);
    expect((await fire()).status).toBe(200);
    expect((await fire()).status).toBe(200);
    let runs: Routes["GET /v1/automations/{id}/runs"]["response"]["data"] = [];
    for (let i = 0; i < 60 && !(runs.length && runs.every((r) => r.status === "succeeded")); i++) {
      await new Promise((r) => setTimeout(r, 500));
      runs = (await api("GET", `/v1/automations/${a.json.id}/runs`)).json.data;
    }
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toBe("succeeded");
    const ch = (await api("GET", `/v1/channels/${channel}`)).json;
    expect(ch.conversationId).toBe(runs[0].conversationId);
    const t = await transcript(String(runs[0].conversationId));
    expect(t.map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
