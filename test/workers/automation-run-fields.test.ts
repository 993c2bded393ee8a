// A run record shows the documented fields only: the attempts' bookkeeping (which turn keys the
// usage counts, which were sent, and to which conversation) stays out of the resource.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runAutomationAttempt } from "../../workers/chat/automation-runner";
import spec from "../../client/openapi.gen.json";
import { claimedRun } from "./automation-helpers";
import { newTenant } from "./helpers";

const DOCUMENTED = [
  "id",
  "automationId",
  "slot",
  "status",
  "attempts",
  "conversationId",
  "queuedAt",
  "startedAt",
  "finishedAt",
  "usage",
  "error",
  "stopReason",
  "prompt",
];

describe("run records", () => {
  it("show only the documented fields, after a turn was sent", async () => {
    const key = await newTenant();
    const { runId, run } = await claimedRun(key, { prompt: "digest", label: "runfields", year: 2050 });
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 1 })).toBeNull();
    const r = (await run())!;
    expect(r.status).toBe("succeeded");
    expect(Object.keys(r).sort()).toEqual([...DOCUMENTED].sort());
  }, 60_000);

  it("show exactly the OpenAPI AutomationRun schema's properties", async () => {
    const key = await newTenant();
    const { runId, run } = await claimedRun(key, { prompt: "digest", label: "runfields", year: 2050 });
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 1 })).toBeNull();
    const schema = spec.components.schemas.AutomationRun as { properties: Record<string, unknown> };
    expect(Object.keys((await run())!).sort()).toEqual(Object.keys(schema.properties).sort());
  }, 60_000);
});
