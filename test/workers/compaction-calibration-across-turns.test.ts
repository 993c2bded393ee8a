// The trigger takes the higher of the chars estimate and the provider's count for the previous
// call, including across turns: the first call of a turn is calibrated by the last call of the
// turn before. A calibration from before the replay shrank (a fold, a stub batch) is scaled down
// with it, and one from another model is not carried.
import { describe, expect, it } from "vitest";
import { ofType } from "../blocks";
import { api, createConversation, sendSseEvents } from "./helpers";

/** Rare CJK characters: the provider counts about one token each, far above the 1.5 chars/token estimate. */
const rare = (n: number) =>
  Array.from({ length: n }, (_, i) => String.fromCodePoint(0x3400 + ((i * 7919) % 6500))).join("");

const settings = { model: "offline-20k", contextWindowTokens: 20_000, outputReserveTokens: 5_000 };
const snapshots = async (id: string) => (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;

describe("the trigger across turns", () => {
  it("compacts the first call of a turn when the previous call's provider count is past the trigger", async () => {
    const id = await createConversation(settings);
    const first = await sendSseEvents(id, `keep this text in mind\n${rare(4_000)}`);
    expect(first.at(-1)?.type).toBe("turn_end");
    const [one] = await snapshots(id);
    // The provider counted past the trigger (75% of 15,000) while the estimate stayed under it.
    expect(one.reportedTokens).toBeGreaterThan(11_250);
    expect(one.estimateTokens).toBeLessThan(11_250);

    const second = await sendSseEvents(id, "and now a short question");
    expect(second.at(-1)?.type).toBe("turn_end");
    const started = second.findIndex((e) => e.type === "compaction_started");
    const firstDelta = second.findIndex((e) => e.type === "delta");
    expect(started).toBeGreaterThanOrEqual(0);
    expect(started).toBeLessThan(firstDelta);
    const trigger = ofType(second[started].data, "compaction_started");
    expect(trigger.forced).toBe(false);
    // The effective count is the provider's figure for the call before, plus what was added since.
    expect(trigger.tokens).toBeGreaterThan(Number(one.reportedTokens));
  });

  it("does not carry the count to a turn on another model", async () => {
    const id = await createConversation(settings);
    await sendSseEvents(id, `keep this text in mind\n${rare(4_000)}`);
    const moved = await api("PATCH", `/v1/conversations/${id}`, {
      settings: { model: "offline-200k", contextWindowTokens: 20_000, outputReserveTokens: 5_000 },
    });
    expect(moved.status, moved.text).toBe(200);
    const second = await sendSseEvents(id, "and now a short question");
    expect(second.at(-1)?.type).toBe("turn_end");
    expect(second.some((e) => e.type === "compaction_started")).toBe(false);
  });
});
