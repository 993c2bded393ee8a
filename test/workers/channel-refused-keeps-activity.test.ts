// A channel turn the conversation object refuses (409 turn_paused: a turn there waits on client
// tool results) does nothing to the channel: its activity clock, and so its rotation and its
// listing row, stay as they were. A turn that starts still moves the clock.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type ChannelPlace, channelObjectName } from "../../durable-objects/channel-do";
import { api, newTenant, newTenantWithId } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function listed(key: string, name: string) {
  const list = await api("GET", "/v1/channels", undefined, { key });
  expect(list.status).toBe(200);
  return list.json.data.find((c) => c.name === name);
}

/** A channel whose conversation waits on a client tool's result. */
async function pausedChannel(key: string, name: string) {
  const paused = await api(
    "POST",
    `/v1/channels/${name}/messages`,
    { content: '@tool get_weather {"city":"Paris"}', tools: [weather] },
    { key },
  );
  expect(paused.status).toBe(200);
  expect(paused.json.stop_reason).toBe("requires_action");
  return paused;
}

describe("a channel turn refused by its conversation", () => {
  it("leaves the channel's activity and its listing row as they were", async () => {
    const key = await newTenant();
    await pausedChannel(key, "chp");
    // The create's listing row is written in line; a pending listing write would have landed by now.
    await sleep(1500);
    const before = await api("GET", "/v1/channels/chp", undefined, { key });
    expect(before.status).toBe(200);
    const listedBefore = await listed(key, "chp");
    expect(listedBefore?.lastActivityAt).toBe(before.json.lastActivityAt);
    await sleep(50);
    const refused = await api("POST", "/v1/channels/chp/messages", { content: "hello again" }, { key });
    expect(refused.status).toBe(409);
    expect(refused.json.error?.type).toBe("turn_paused");
    const after = await api("GET", "/v1/channels/chp", undefined, { key });
    expect(after.json).toEqual(before.json);
    // Past the listing's lag: no activity write follows the refusal either.
    await sleep(1500);
    expect(await listed(key, "chp")).toEqual(listedBefore);
  }, 30_000);

  it("still moves the clock (and the listing) for a turn that starts", async () => {
    const key = await newTenant();
    expect((await api("POST", "/v1/channels/chs/messages", { content: "hello" }, { key })).status).toBe(200);
    const before = (await api("GET", "/v1/channels/chs", undefined, { key })).json;
    await sleep(50);
    const sentAt = Date.now();
    expect((await api("POST", "/v1/channels/chs/messages", { content: "again" }, { key })).status).toBe(200);
    const after = (await api("GET", "/v1/channels/chs", undefined, { key })).json;
    expect(after.conversationId).toBe(before.conversationId);
    expect(Date.parse(String(after.lastActivityAt))).toBeGreaterThanOrEqual(sentAt);
    const end = Date.now() + 10_000;
    while ((await listed(key, "chs"))?.lastActivityAt !== after.lastActivityAt) {
      expect(Date.now() < end).toBe(true);
      await sleep(100);
    }
  }, 30_000);
});

describe("the channel object's touch", () => {
  const channelOf = (tenantId: string, name: string) =>
    env.CHANNEL.get(env.CHANNEL.idFromName(channelObjectName(tenantId, name)));
  const placedIn = (place: ChannelPlace) => {
    if ("refused" in place) throw new Error(place.refused);
    return place;
  };

  it("moves no clock for a conversation the channel rotated away from", async () => {
    const { tenantId } = await newTenantWithId();
    const channel = channelOf(tenantId, "race");
    const first = placedIn(await channel.resolve({ tenantId, name: "race", mark: false }));
    const rotated = placedIn(await channel.resolve({ tenantId, name: "race", gone: first.conversationId }));
    expect(rotated.rotatedFrom).toBe(first.conversationId);
    const before = await channel.get(tenantId, "race");
    const late = { tenantId, name: "race", now: Date.now() + 60_000, ran: true, hold: first.hold };
    await channel.touch({ ...late, conversationId: first.conversationId });
    expect(await channel.get(tenantId, "race")).toEqual(before);
    await channel.touch({ ...late, conversationId: rotated.conversationId });
    expect((await channel.get(tenantId, "race"))?.lastActivityAt).toBe(new Date(late.now).toISOString());
  });

  it("keeps a held conversation from rotating until its message is touched or let go", async () => {
    const { tenantId } = await newTenantWithId();
    const channel = channelOf(tenantId, "held");
    await channel.configure(tenantId, "held", { rotationSeconds: 1 });
    const made = placedIn(await channel.resolve({ tenantId, name: "held" }));
    // A message whose turn is still to start holds the conversation, past the rotation time too.
    const held = placedIn(await channel.resolve({ tenantId, name: "held", mark: false }));
    expect(held.conversationId).toBe(made.conversationId);
    expect(held.hold).toBeDefined();
    await sleep(1200);
    const next = placedIn(await channel.resolve({ tenantId, name: "held", mark: false }));
    expect(next).toMatchObject({ conversationId: made.conversationId, rotatedFrom: null });
    const shown = await channel.get(tenantId, "held");
    // Refused: the holds go, and nothing moved.
    const refusedAt = { tenantId, name: "held", conversationId: made.conversationId, now: Date.now(), ran: false };
    await channel.touch({ ...refusedAt, hold: held.hold });
    await channel.touch({ ...refusedAt, hold: next.hold });
    expect(await channel.get(tenantId, "held")).toEqual(shown);
    const after = placedIn(await channel.resolve({ tenantId, name: "held", mark: false }));
    expect(after.rotatedFrom).toBe(made.conversationId);
  }, 30_000);
});
