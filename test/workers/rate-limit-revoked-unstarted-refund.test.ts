// A JSON turn that never started (a 502 storage_error before its model loop: nothing saved, nothing
// spent) gives its turn tokens back even when its key is revoked while it fails and its answer is
// therefore a 401: what decides is whether the turn started, not the status (docs/api-notes.md).
import { describe, expect, it } from "vitest";
import { callWith } from "./app-with-vars";
import { api, createConversation, newTenant } from "./helpers";
import { breakHeadWrites, fileElsewhere } from "./unstartable-turn";

const LIMITS = {
  RATE_LIMIT_PER_MINUTE: "1000",
  TURN_RATE_LIMIT_PER_MINUTE: "0",
  TENANT_TURN_RATE_LIMIT_PER_MINUTE: "1",
};
const turn = (key: string, id: string, body: { content: string; attachments?: string[] }) =>
  callWith(LIMITS, { method: "POST", path: `/v1/conversations/${id}/messages`, key, body });

describe("an unstarted turn whose key is revoked while it fails", () => {
  it("is a 401 that gives the tenant's turn token back", async () => {
    const tenantKey = await newTenant();
    const made = await api("POST", "/v1/keys", { name: "doomed" }, { key: tenantKey });
    const doomed = made.json.apiKey;
    const broken = await createConversation(undefined, doomed);
    const other = await createConversation(undefined, tenantKey);
    const file = await fileElsewhere(doomed);
    await breakHeadWrites(broken);
    const pending = turn(doomed, broken, { content: "read my notes", attachments: [file] });
    // Revoked while the turn's head writes fail through their retries.
    await new Promise((r) => setTimeout(r, 150));
    expect((await api("DELETE", `/v1/keys/${made.json.key.id}`, undefined, { key: tenantKey })).status).toBe(200);
    const refused = await pending;
    expect(refused.status, JSON.stringify(refused.json)).toBe(401);
    // Nothing of the turn was saved.
    const saved = await api("GET", `/v1/conversations/${broken}/messages`, undefined, { key: tenantKey });
    expect(saved.json.data).toEqual([]);
    // The tenant's one turn a minute is still there.
    const next = await turn(tenantKey, other, { content: "runs" });
    expect(next.status, JSON.stringify(next.json)).toBe(200);
  });
});
