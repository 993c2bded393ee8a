// A project DELETE cut short after its row went (a 5xx): repeating it completes it, removing what
// landed while the first ran (a file, a tool), and another tenant's DELETE of the id sweeps nothing.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { attachmentPrefix } from "../../r2-layout";
import { deleteThrough, flakyBucket, watchedDb } from "./delete-faults";
import { api, newTenantWithId, r2KeysUnder, send } from "./helpers";

/**
 * D1 whose `DELETE FROM "projects"` first runs `before()` (something landing while the delete
 * runs), and whose statements matching `failing.sql` throw while it is set (a D1 outage).
 */
const hookedDb = (real: D1Database, hooks: { before: () => Promise<void>; failing: { sql: RegExp | null } }) =>
  watchedDb(real, async (sql) => {
    if (/^delete from "projects"/i.test(sql)) await hooks.before();
    if (hooks.failing.sql?.test(sql)) throw new Error("injected: D1 statement failed");
  });

const registerTool = async (key: string, projectId: string) => {
  const r = await api(
    "POST",
    "/v1/tools",
    { kind: "client", name: "late_tool", description: "Asks the user.", projectId, inputSchema: { type: "object" } },
    { key },
  );
  expect(r.status).toBe(201);
  return r.json.id;
};

describe("DELETE /v1/projects/:id cut short after the project row went", () => {
  it("a repeat completes it: the file uploaded during the delete is gone, bytes and row, and unreadable", async () => {
    const { tenantId, key } = await newTenantWithId();
    const { key: otherKey } = await newTenantWithId();
    const proj = (await api("POST", "/v1/projects", { name: "doomed" }, { key })).json.id;
    const r2 = { on: false };
    let lateFile = "";
    const db = hookedDb(env.DB, {
      failing: { sql: null },
      before: async () => {
        if (lateFile) return;
        // A file upload landing after the delete's first sweep, before the row goes.
        const up = await api("POST", `/v1/projects/${proj}/files?name=late.txt`, "late-secret-KX93 line\n", {
          key,
          raw: true,
          headers: { "content-type": "text/plain" },
        });
        expect(up.status).toBe(201);
        lateFile = up.json.id;
        r2.on = true; // then R2 fails for a moment
      },
    });
    expect(
      await deleteThrough({ path: `/v1/projects/${proj}`, key, db, bucket: flakyBucket(r2) }),
    ).toBeGreaterThanOrEqual(500);
    r2.on = false;
    expect(lateFile).not.toBe("");

    // Another tenant's DELETE of the id sweeps nothing of this tenant's and is a 404.
    expect((await api("DELETE", `/v1/projects/${proj}`, undefined, { key: otherKey })).status).toBe(404);
    expect(
      await env.DB.prepare("SELECT id FROM attachments WHERE id LIKE ?").bind(`${lateFile}%`).first(),
    ).not.toBeNull();

    expect((await api("DELETE", `/v1/projects/${proj}`, undefined, { key })).status).toBe(204);
    expect(await env.DB.prepare("SELECT id FROM attachments WHERE id LIKE ?").bind(`${lateFile}%`).first()).toBeNull();
    expect(await r2KeysUnder(attachmentPrefix(tenantId, lateFile))).toEqual([]);
    // Done: the id is now as unknown as any other.
    expect((await api("DELETE", `/v1/projects/${proj}`, undefined, { key })).status).toBe(404);
    expect((await api("DELETE", `/v1/projects/${proj}/files/${lateFile}`, undefined, { key })).status).toBe(404);

    // No conversation of the tenant can attach it or read it.
    const conv = (await api("POST", "/v1/conversations", { title: "other" }, { key })).json.id;
    const r = await send(conv, `@tool file_read {"attachment_id":"${lateFile}","lines":"1-1"}`, key);
    expect(r.text).not.toContain("late-secret-KX93");
  });

  it("a repeat completes it: a tool registered during the delete goes when the second tool sweep failed", async () => {
    const { key } = await newTenantWithId();
    const proj = (await api("POST", "/v1/projects", { name: "doomed" }, { key })).json.id;
    const failing: { sql: RegExp | null } = { sql: null };
    let lateTool = "";
    const db = hookedDb(env.DB, {
      failing,
      before: async () => {
        if (lateTool) return;
        lateTool = await registerTool(key, proj);
        failing.sql = /^delete from "(tools|mcp_servers)"/i; // then D1 fails for a moment
      },
    });
    expect(await deleteThrough({ path: `/v1/projects/${proj}`, key, db, bucket: env.BUCKET })).toBeGreaterThanOrEqual(
      500,
    );
    failing.sql = null;
    expect((await api("GET", `/v1/tools/${lateTool}`, undefined, { key })).status).toBe(200);

    expect((await api("DELETE", `/v1/projects/${proj}`, undefined, { key })).status).toBe(204);
    expect((await api("GET", `/v1/tools/${lateTool}`, undefined, { key })).status).toBe(404);
    expect((await api("DELETE", `/v1/projects/${proj}`, undefined, { key })).status).toBe(404);
  });
});
