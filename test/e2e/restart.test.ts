// State lives under the persist folder: a conversation survives a full restart of the stack, and
// a crash of the whole stack (SIGKILL) in the middle of a turn: what was saved stays, the client
// finds it with GET /messages?after=<last seq it saw>, and the next turn is taken and indexed.
// HTTP tools too: loopback endpoints are allowed on the local stack, and the generated dev
// TOOL_SECRETS_KEY is kept beside the state, so a tool registered before a restart still sends its
// sealed headers after it. (One file, so the stack starts three times, not five.)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startStack } from "../../scripts/stack.mjs";
import type { Routes, Schemas } from "../../client";

/** A response's JSON as the document describes the operation `R`'s answer. */
const answer = async <R extends keyof Routes>(res: Response, _route: R): Promise<Routes[R]["response"]> =>
  (await res.json()) as Routes[R]["response"];

const auth = { authorization: "Bearer dev-local-key", "content-type": "application/json" };
const SECRET = "e2e-tool-secret-value-42";

/** A loopback HTTP tool endpoint that answers a forecast and keeps what each call sent. */
async function forecastServer() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.end(`forecast for ${JSON.parse(body).city}: sunny`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { received, server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/weather` };
}

describe("persistence", () => {
  it("keeps conversations, transcripts, the index and sealed tool headers across a restart, and across a crash mid-turn", async () => {
    const dir = mkdtempSync(join(tmpdir(), "context-chat-restart-"));
    const tools = await forecastServer();
    try {
      let stack = await startStack({ persistTo: dir });
      const post = (path: string, body: unknown) =>
        fetch(`${stack.baseUrl}${path}`, { method: "POST", headers: auth, body: JSON.stringify(body) });
      const tool = await post("/v1/tools", {
        kind: "http",
        name: "forecast",
        description: "Weather forecast for a city.",
        inputSchema: { type: "object", properties: { city: { type: "string" } } },
        endpoint: tools.endpoint,
        headers: { "X-Api-Key": SECRET },
      });
      expect(tool.status).toBe(201);
      const toolConv = await answer(await post("/v1/conversations", { title: "tools" }), "POST /v1/conversations");
      await post(`/v1/conversations/${toolConv.id}/messages`, { content: `@tool tool_activate {"name":"forecast"}` });
      const call = async (city: string) => {
        const turn = await answer(
          await post(`/v1/conversations/${toolConv.id}/messages`, { content: `@tool forecast {"city":"${city}"}` }),
          "POST /v1/conversations/{id}/messages",
        );
        return turn.messages.flatMap((m) => m.content).find((b) => b.type === "tool_result");
      };
      expect(await call("Paris")).toMatchObject({ content: "forecast for Paris: sunny" });
      expect(tools.received.at(-1)!.headers["x-api-key"]).toBe(SECRET);
      expect(readFileSync(join(dir, "tool-secrets-key"), "utf8").trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);

      const created = await answer(
        await fetch(`${stack.baseUrl}/v1/conversations`, { method: "POST", headers: auth, body: "{}" }),
        "POST /v1/conversations",
      );
      const url = `${stack.baseUrl}/v1/conversations/${created.id}`;
      await fetch(`${url}/messages`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ content: "survive-restart-marker" }),
      });
      await new Promise((r) => setTimeout(r, 500));
      await stack.stop();
      stack = await startStack({ persistTo: dir });
      const base = `${stack.baseUrl}/v1/conversations/${created.id}`;
      const page = await answer(
        await fetch(`${base}/messages`, { headers: auth }),
        "GET /v1/conversations/{id}/messages",
      );
      expect(page.data.map((m) => m.role)).toEqual(["user", "assistant"]);
      const search = await answer(
        await fetch(`${stack.baseUrl}/v1/search?q=survive-restart-marker`, { headers: auth }),
        "GET /v1/search",
      );
      expect(search.data[0].conversationId).toBe(created.id);
      // The tool registered before the restart sends its sealed header after it; the log never shows it.
      expect(await call("Oslo")).toMatchObject({ content: "forecast for Oslo: sunny" });
      expect(tools.received.at(-1)!.headers["x-api-key"]).toBe(SECRET);
      expect(stack.output()).not.toContain(SECRET);

      // The crash: SIGKILL the whole stack as soon as the reply starts streaming.
      const res = await fetch(`${base}/messages`, {
        method: "POST",
        headers: { ...auth, accept: "text/event-stream" },
        body: JSON.stringify({ content: "crash-marker mid-turn\n@reply-chars 60000" }),
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (!/event: delta/.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      await stack.kill();
      await reader.read().catch(() => {});
      const told = [...text.matchAll(/^event: message\ndata: (.*)$/gm)].map(
        (m) => (JSON.parse(m[1]) as { message: Schemas["Message"] & { id: string } }).message,
      );
      expect(told.map((m) => m.seq)).toEqual([3]);

      stack = await startStack({ persistTo: dir });
      const again = `${stack.baseUrl}/v1/conversations/${created.id}`;
      // The client resumes after the last seq it saw; whatever the turn saved before the crash is there once.
      const before = await answer(
        await fetch(`${again}/messages?after=0`, { headers: auth }),
        "GET /v1/conversations/{id}/messages",
      );
      expect(before.data.map((m) => m.seq)).toEqual(before.data.map((_, i) => i + 1));
      expect(JSON.stringify(before.data[2])).toBe(JSON.stringify(told[0]));
      const next = await fetch(`${again}/messages`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ content: "after-the-crash" }),
      });
      expect(next.status).toBe(200);
      const body = await answer(next, "POST /v1/conversations/{id}/messages");
      expect(body.messages[0].seq).toBe(before.data.length + 1);
      let found: Routes["GET /v1/search"]["response"]["data"] = [];
      for (let i = 0; i < 40 && found.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 250));
        found = (
          await answer(
            await fetch(`${stack.baseUrl}/v1/search?q=crash-marker&conversation=${created.id}&kind=message`, {
              headers: auth,
            }),
            "GET /v1/search",
          )
        ).data;
      }
      expect(found.find((h) => h.role === "user")?.id).toBe(told[0].id);
      console.log(
        `[faults] whole stack killed mid-turn: 1 injected; ${before.data.length - 2} messages of the crashed turn kept; survived`,
      );
      await stack.stop();
    } finally {
      tools.server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000); // three starts of the whole stack: room for a loaded machine
});
