// A project file whose final keep check fails (the statement that counts the project's files and
// marks it changed) leaves nothing behind: no file listed, none in its conversations' prompt.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callWithDb, faultyDb } from "./faulty-d1";
import { api, newTenant } from "./helpers";

describe("a project file upload whose keep check fails", () => {
  it("answers an error and leaves no file listed nor in the prompt", async () => {
    const key = await newTenant();
    const p = await api("POST", "/v1/projects", { name: "Faulty" }, { key });
    expect(p.status).toBe(201);
    const projectId = p.json.id;
    const body = "requirement R-17\n";
    const { db, state } = faultyDb(env.DB, (sql) => /^update "projects"/i.test(sql) && /count\(/i.test(sql));
    const res = await callWithDb(db, {
      method: "POST",
      path: `/v1/projects/${projectId}/files?name=spec.txt`,
      key,
      body,
      headers: { "content-type": "text/plain", "content-length": String(new TextEncoder().encode(body).length) },
    });
    expect(state.failed).toHaveLength(1);
    expect(res.status).toBeGreaterThanOrEqual(500);
    const files = await api("GET", `/v1/projects/${projectId}/files`, undefined, { key });
    expect(files.status).toBe(200);
    expect(files.json.data).toEqual([]);
    const c = await api("POST", "/v1/conversations", { title: "t", projectId }, { key });
    expect(c.status).toBe(201);
    const system = (await api("GET", `/v1/conversations/${c.json.id}/replay`, undefined, { key })).json.system[0].text;
    expect(system).not.toContain('name="spec.txt"');
    // The project still takes a file afterwards.
    const again = await api("POST", `/v1/projects/${projectId}/files?name=spec.txt`, body, {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(again.status).toBe(201);
    const after = await api("GET", `/v1/projects/${projectId}/files`, undefined, { key });
    expect(after.json.data.map((f) => f.name)).toEqual(["spec.txt"]);
  });
});
