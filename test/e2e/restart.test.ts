// State lives under the persist folder: a conversation survives a full restart of the stack.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startStack } from "../../scripts/stack.mjs";

describe("persistence", () => {
  it("keeps conversations, transcripts and the index across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "context-chat-restart-"));
    const auth = { authorization: "Bearer dev-local-key", "content-type": "application/json" };
    try {
      let stack = await startStack({ persistTo: dir });
      const created: any = await (await fetch(`${stack.baseUrl}/v1/conversations`, { method: "POST", headers: auth, body: "{}" })).json();
      await fetch(`${stack.baseUrl}/v1/conversations/${created.id}/messages`, { method: "POST", headers: auth, body: JSON.stringify({ content: "survive-restart-marker" }) });
      await new Promise((r) => setTimeout(r, 500));
      await stack.stop();
      stack = await startStack({ persistTo: dir });
      const page: any = await (await fetch(`${stack.baseUrl}/v1/conversations/${created.id}/messages`, { headers: auth })).json();
      expect(page.messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
      const search: any = await (await fetch(`${stack.baseUrl}/v1/search?q=survive-restart-marker`, { headers: auth })).json();
      expect(search.results[0].conversationId).toBe(created.id);
      await stack.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
