// Settings writes to different projects never refuse each other: only the tenant's settings are
// checked against a project's (docs/api-notes.md, "Settings for new conversations"). Before, every
// project's settings write moved the tenant's one settings version and was made only while it was
// the one read, so of several projects written at once all but a few found it moved at every try
// and were a 409. A tenant PUT racing them is still checked against every one that landed.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";

const N = 8;

/** `n` projects of the tenant with no settings of their own; their ids. */
async function projects(key: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const made = await api("POST", "/v1/projects", { name: `p${i}` }, { key });
    expect(made.status, made.text).toBe(201);
    ids.push(made.json.id as string);
  }
  return ids;
}

describe("settings writes to different projects at once", () => {
  it(`${N} PATCHes of ${N} projects' settings all land`, async () => {
    const key = await newTenant();
    const ids = await projects(key, N);
    const patched = await Promise.all(
      ids.map((id, i) => api("PATCH", `/v1/projects/${id}`, { settings: { tailMessages: 10 + i } }, { key })),
    );
    expect(
      patched.map((r) => r.status),
      patched.map((r) => r.text).join("\n"),
    ).toEqual(ids.map(() => 200));
    for (const [i, id] of ids.entries())
      expect((await api("GET", `/v1/projects/${id}`, undefined, { key })).json.settings).toEqual({
        tailMessages: 10 + i,
      });
  });

  it(`${N} POSTs of projects with settings (empty ones too) all land`, async () => {
    const key = await newTenant();
    const created = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        api("POST", "/v1/projects", { name: `q${i}`, settings: i % 2 ? {} : { tailMessages: 10 + i } }, { key }),
      ),
    );
    expect(
      created.map((r) => r.status),
      created.map((r) => r.text).join("\n"),
    ).toEqual(created.map(() => 201));
    expect((await api("GET", "/v1/projects?limit=200", undefined, { key })).json.data).toHaveLength(N);
  });

  it("a tenant PUT racing project PATCHes never leaves a project that can start no conversation", async () => {
    // Each alone is accepted; together the project's target reaches the tenant's trigger.
    const TENANT = { compactTriggerRatio: 0.55 };
    const PROJECT = { compactTargetRatio: 0.6 };
    for (let round = 0; round < 3; round++) {
      const key = await newTenant();
      const ids = await projects(key, 6);
      const [put, ...patched] = await Promise.all([
        api("PUT", "/v1/settings", { settings: TENANT }, { key }),
        ...ids.map((id) => api("PATCH", `/v1/projects/${id}`, { settings: PROJECT }, { key })),
      ]);
      expect([200, 400, 409], put.text).toContain(put.status);
      for (const r of patched) expect([200, 400], r.text).toContain(r.status);
      const tenant = (await api("GET", "/v1/settings", undefined, { key })).json.settings;
      const landed: string[] = [];
      for (const id of ids) {
        const own = (await api("GET", `/v1/projects/${id}`, undefined, { key })).json.settings;
        if (JSON.stringify(own) !== "{}") landed.push(id);
      }
      // Never both: the tenant's change and a project's that cannot start a conversation over it.
      if (put.status === 200) {
        expect(tenant).toEqual(TENANT);
        expect(landed).toEqual([]);
        for (const r of patched) expect(r.status).toBe(400);
      } else {
        expect(tenant).toEqual({});
        expect(landed).toHaveLength(patched.filter((r) => r.status === 200).length);
      }
      for (const id of ids)
        expect((await api("POST", "/v1/conversations", { projectId: id }, { key })).status).toBe(201);
    }
  });
});
