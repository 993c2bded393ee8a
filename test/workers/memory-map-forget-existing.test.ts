// A conversation that already carries today's memory map rereads the stored map row once it is
// MEMORY_MAP_RECHECK_MS old (a warm turn reads no D1 on its path: docs/scale.md): a deleted note
// (or conversation), or a note whose tags change, forgets the stored map, so once that reread is
// due that conversation's next prompt no longer carries its words; a new conversation's at once.
// Between rereads its prompt prefix stays byte for byte the same.
import { afterEach, describe, expect, it, vi } from "vitest";
import { MEMORY_MAP_RECHECK_MS } from "../../services/memory/memory-map";
import { api, createConversation, newTenantWithId } from "./helpers";

const systemOf = async (key: string, id: string): Promise<string> =>
  (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json.system[0].text;

/** The clock moved past the conversation's reread of the stored map. */
function pastTheReread(): void {
  const now = Date.now();
  vi.spyOn(Date, "now").mockImplementation(() => now + MEMORY_MAP_RECHECK_MS + 1_000);
}

afterEach(() => vi.restoreAllMocks());

describe("the memory map in an existing conversation's prompt", () => {
  it("forgets a deleted note's title and tags once the reread is due; a new conversation at once", async () => {
    const { key } = await newTenantWithId();
    const note = (
      await api("POST", "/v1/memory", { text: "x", title: "Zorblax oncology", tags: ["chemoplan"] }, { key })
    ).json;
    const id = await createConversation(undefined, key);
    const before = await systemOf(key, id);
    expect(before).toContain("chemoplan");
    expect(before).toContain("zorblax");
    // While the stored map stays, the prompt stays byte-stable.
    expect(await systemOf(key, id)).toBe(before);
    expect((await api("DELETE", `/v1/memory/${note.id}`, undefined, { key })).status).toBe(204);
    const fresh = await createConversation(undefined, key);
    expect(await systemOf(key, fresh)).not.toContain("chemoplan");
    pastTheReread();
    const after = await systemOf(key, id);
    expect(after).toContain("<memory_map ");
    expect(after).not.toContain("chemoplan");
    expect(after).not.toContain("zorblax");
    expect(await systemOf(key, id)).toBe(after);
  });

  it("forgets a note's old tags after they change, in a project's conversation too", async () => {
    const { key } = await newTenantWithId();
    const project = (await api("POST", "/v1/projects", { name: "Proj" }, { key })).json;
    const note = (await api("POST", "/v1/memory", { text: "x", title: "plain", tags: ["quixotrope"] }, { key })).json;
    const id = (await api("POST", "/v1/conversations", { title: "t", projectId: project.id }, { key })).json.id;
    expect(await systemOf(key, id)).toContain("quixotrope");
    expect((await api("PATCH", `/v1/memory/${note.id}`, { tags: ["other"] }, { key })).status).toBe(200);
    pastTheReread();
    const after = await systemOf(key, id);
    expect(after).toContain(`<project name="Proj"`);
    expect(after).not.toContain("quixotrope");
  });

  it("forgets a deleted conversation's title in another conversation once the reread is due", async () => {
    const { key } = await newTenantWithId();
    const gone = (await api("POST", "/v1/conversations", { title: "Flumbergast summit" }, { key })).json.id;
    const id = await createConversation(undefined, key);
    expect(await systemOf(key, id)).toContain("flumbergast");
    expect((await api("DELETE", `/v1/conversations/${gone}`, undefined, { key })).status).toBe(204);
    pastTheReread();
    expect(await systemOf(key, id)).not.toContain("flumbergast");
  });
});
