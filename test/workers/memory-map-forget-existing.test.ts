// A conversation that already carries today's memory map reads the stored map row on every prompt
// build: a deleted note (or conversation, or one renamed) forgets the stored map, so the very next
// prompt of that conversation no longer carries its words, and while the row stays the same its
// prompt prefix stays byte for byte the same.
import { describe, expect, it } from "vitest";
import { api, createConversation, newTenantWithId } from "./helpers";

const systemOf = async (key: string, id: string): Promise<string> =>
  (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json.system[0].text;

describe("the memory map in an existing conversation's prompt", () => {
  it("forgets a deleted note's title and tags on the next prompt", async () => {
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
    const after = await systemOf(key, id);
    expect(after).toContain(`<project name="Proj"`);
    expect(after).not.toContain("quixotrope");
  });

  it("forgets a deleted conversation's title in another conversation's next prompt", async () => {
    const { key } = await newTenantWithId();
    const gone = (await api("POST", "/v1/conversations", { title: "Flumbergast summit" }, { key })).json.id;
    const id = await createConversation(undefined, key);
    expect(await systemOf(key, id)).toContain("flumbergast");
    expect((await api("DELETE", `/v1/conversations/${gone}`, undefined, { key })).status).toBe(204);
    expect(await systemOf(key, id)).not.toContain("flumbergast");
  });
});
