// A note's delete (the API's, memory_forget's, a regenerated or refused exchange's) and a note's edit
// forget only the stored memory maps naming a topic its title or tags gave: a map that never named
// them stays, and so does every conversation's system prompt (the tenant's cached prompt prefix).
import { describe, expect, it } from "vitest";
import { api, inConversation, newTenant, send } from "./helpers";

type Req = { system: { text: string }[] };
const systemOf = async (id: string, key: string, snapshot: number) =>
  ((await api("GET", `/v1/conversations/${id}/prompts/${snapshot}`, undefined, { key })).json as unknown as Req).system
    .map((s) => s.text)
    .join("");

const topicsLine = (system: string): string => /^- topics: .*$/m.exec(system)?.[0] ?? "";

/** MEMORY_MAP_RECHECK_MS (5 minutes) later for the conversation's held map. */
const rereadDue = (id: string) =>
  inConversation(id, (i) => {
    const c = i.cache as unknown as { memoryMap: { readAt: number } | null };
    if (c.memoryMap) c.memoryMap.readAt = 0;
  });

/** A tenant with a conversation "Harbour" whose first turn stored today's map (its snapshot 1). */
async function withStoredMap(): Promise<{ key: string; b: string }> {
  const key = await newTenant();
  const b = (await api("POST", "/v1/conversations", { title: "Harbour" }, { key })).json.id as string;
  expect((await send(b, "first", key)).status).toBe(200);
  return { key, b };
}

describe("a note's delete or edit and the tenant's memory map", () => {
  it("a note the map never named, deleted, leaves other conversations' system prompt as it was", async () => {
    const { key, b } = await withStoredMap();
    // After the map is stored: another conversation (the map keeps its count until tomorrow), and a
    // note that comes and goes (the map never named it).
    await api("POST", "/v1/conversations", { title: "Harbour lights" }, { key });
    const note = await api("POST", "/v1/memory", { title: "scratch", text: "a passing thought" }, { key });
    expect(note.status).toBe(201);
    expect((await api("DELETE", `/v1/memory/${note.json.id}`, undefined, { key })).status).toBe(204);
    await rereadDue(b);
    expect((await send(b, "second", key)).status).toBe(200);
    expect(await systemOf(b, key, 2)).toBe(await systemOf(b, key, 1));
  });

  it("a regenerate of an exchange that saved a note leaves other conversations' system prompt as it was", async () => {
    const { key, b } = await withStoredMap();
    const a = (await api("POST", "/v1/conversations", { title: "Seats" }, { key })).json.id as string;
    expect((await send(a, '@tool memory_save {"text":"window seat","title":"seats"}', key)).status).toBe(200);
    const ids = async () =>
      ((await api("GET", "/v1/memory", undefined, { key })).json.data as { id: string }[]).map((n) => n.id);
    const saved = await ids();
    expect(saved).toHaveLength(1);
    expect((await api("POST", `/v1/conversations/${a}/messages`, { regenerate: true }, { key })).status).toBe(200);
    // The regenerate deleted the replaced exchange's note (its replay saved another).
    expect(await ids()).not.toContain(saved[0]);
    await rereadDue(b);
    expect((await send(b, "second", key)).status).toBe(200);
    expect(await systemOf(b, key, 2)).toBe(await systemOf(b, key, 1));
  });

  it("an edit of tags the map never named leaves other conversations' system prompt as it was", async () => {
    const { key, b } = await withStoredMap();
    const note = await api("POST", "/v1/memory", { title: "scratch", text: "x", tags: ["alphaword"] }, { key });
    expect(note.status).toBe(201);
    expect((await api("PATCH", `/v1/memory/${note.json.id}`, { tags: ["betaword"] }, { key })).status).toBe(200);
    await rereadDue(b);
    expect((await send(b, "second", key)).status).toBe(200);
    expect(await systemOf(b, key, 2)).toBe(await systemOf(b, key, 1));
  });

  it("a note the map named, deleted, leaves the map: its title word and whole tag are no topics after", async () => {
    const key = await newTenant();
    const note = await api("POST", "/v1/memory", { title: "Lighthouse", text: "x", tags: ["node.js"] }, { key });
    expect(note.status).toBe(201);
    const b = (await api("POST", "/v1/conversations", { title: "Harbour" }, { key })).json.id as string;
    expect((await send(b, "first", key)).status).toBe(200);
    const before = topicsLine(await systemOf(b, key, 1));
    expect(before).toContain("lighthouse");
    expect(before).toContain("node.js");
    expect((await api("DELETE", `/v1/memory/${note.json.id}`, undefined, { key })).status).toBe(204);
    await rereadDue(b);
    expect((await send(b, "second", key)).status).toBe(200);
    const after = topicsLine(await systemOf(b, key, 2));
    expect(after).toContain("harbour");
    expect(after).not.toContain("lighthouse");
    expect(after).not.toContain("node.js");
  });

  it("an edit that keeps the title's words forgets nothing; one that takes a word off forgets the map naming it", async () => {
    const key = await newTenant();
    const note = await api("POST", "/v1/memory", { title: "Lighthouse keeper", text: "x" }, { key });
    const b = (await api("POST", "/v1/conversations", { title: "Harbour" }, { key })).json.id as string;
    expect((await send(b, "first", key)).status).toBe(200);
    expect(topicsLine(await systemOf(b, key, 1))).toContain("keeper");
    // A map computed afresh would count this one: the stored map is kept, not computed again.
    await api("POST", "/v1/conversations", { title: "Harbour lights" }, { key });
    // Same words, another case: every map still says what it said.
    expect((await api("PATCH", `/v1/memory/${note.json.id}`, { title: "lighthouse Keeper" }, { key })).status).toBe(
      200,
    );
    await rereadDue(b);
    expect((await send(b, "second", key)).status).toBe(200);
    expect(await systemOf(b, key, 2)).toBe(await systemOf(b, key, 1));
    expect((await api("PATCH", `/v1/memory/${note.json.id}`, { title: "Lighthouse" }, { key })).status).toBe(200);
    await rereadDue(b);
    expect((await send(b, "third", key)).status).toBe(200);
    const after = topicsLine(await systemOf(b, key, 3));
    expect(after).toContain("lighthouse");
    expect(after).not.toContain("keeper");
  });
});
