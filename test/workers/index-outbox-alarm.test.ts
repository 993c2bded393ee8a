// A failed indexing run retries by alarm, but never pushes back an earlier alarm another part set:
// a paused turn's wait must still end at its `expiresAt`, not 30 s after the failure.
import { describe, expect, it } from "vitest";
import { api, createConversation, eventually, inConversation } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("the indexing outbox's retry alarm", () => {
  it("a failed run keeps a paused turn's earlier expiresAt alarm", async () => {
    const id = await createConversation({ clientToolTimeoutSeconds: 5 });
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `@tool get_weather {"city":"zanzibar-retry-alarm"}`,
      tools: [weather],
    });
    const expiresAt = Date.parse(paused.json.requires_action!.expiresAt);
    // Indexing caught up: the alarm is the wait's end.
    await eventually(async () => (await inConversation(id, (_i, state) => state.storage.getAlarm())) === expiresAt);
    const alarm = await inConversation(id, async (i, state) => {
      // The next indexing run fails (a cortex or D1 outage).
      const store = i.store as unknown as { transcriptPage: (...a: unknown[]) => unknown };
      const real = store.transcriptPage.bind(i.store);
      store.transcriptPage = () => {
        throw new Error("injected: indexing fails");
      };
      try {
        await i.outbox.pending();
      } finally {
        store.transcriptPage = real;
      }
      return state.storage.getAlarm();
    });
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(expiresAt);
  });

  it("a failed run with no earlier alarm set still sets its retry", async () => {
    const id = await createConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "hello" });
    const alarm = await inConversation(id, async (i, state) => {
      await i.outbox.pending();
      await state.storage.deleteAlarm();
      const store = i.store as unknown as { transcriptPage: (...a: unknown[]) => unknown };
      const real = store.transcriptPage.bind(i.store);
      store.transcriptPage = () => {
        throw new Error("injected: indexing fails");
      };
      const before = Date.now();
      try {
        await i.outbox.pending();
      } finally {
        store.transcriptPage = real;
      }
      return { at: await state.storage.getAlarm(), before };
    });
    expect(alarm.at).not.toBeNull();
    expect(alarm.at!).toBeGreaterThanOrEqual(alarm.before + 29_000);
  });
});
