// A keyed retry of a turn whose object died mid-turn answers with the usage the ledger was given for
// that turn (the dead turn's meter at the object's next start), not with zeros.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createConversation, eventually, transcript } from "./helpers";
import { stubOf } from "./fold-scripted";

const keyed = (id: string, content: string, key: string) =>
  api("POST", `/v1/conversations/${id}/messages`, { content }, { headers: { "idempotency-key": key } });

describe("a keyed retry of a turn its object died in", () => {
  it("answers turn_interrupted with the usage the ledger bills for the turn", async () => {
    const id = await createConversation();
    const key = `k-dead-${crypto.randomUUID()}`;
    const content = 'ask it\n@tool memory_search {"query":"lake"}\n@model-error 500 call=2';
    const dying = keyed(id, content, key).catch((err) => err);
    await eventually(async () => (await transcript(id)).some((m) => m.role === "assistant"), 20_000);
    await runInDurableObject(stubOf(id), (_i, state) => state.abort("crash")).catch(() => {});
    await dying;
    const retry = await keyed(id, content, key);
    expect(retry.status).toBe(502);
    expect(retry.json.error?.type).toBe("turn_interrupted");
    await runDurableObjectAlarm(stubOf(id));
    const billed = await eventually(async () => {
      const total = (await api("GET", `/v1/usage?conversation=${id}`)).json.total;
      return total.turns === 1 ? total : null;
    });
    expect(billed.output_tokens).toBeGreaterThan(0);
    const usage = retry.json.usage!;
    expect(usage.output_tokens).toBe(billed.output_tokens);
    expect(usage.input_tokens).toBe(billed.input_tokens);
    expect(usage.cost_usd).toBeCloseTo(billed.cost_usd, 6);
    // A second retry (another incarnation) answers the same.
    const again = await keyed(id, content, key);
    expect(again.json.usage).toEqual(usage);
  });
});
