// HTTP tools on the real local stack (what `npm start` runs): loopback endpoints are allowed there,
// and the generated dev TOOL_SECRETS_KEY is kept beside the state, so a tool registered before a
// restart still sends its sealed headers after it.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startStack } from "../../scripts/stack.mjs";
import type { Routes } from "../../client";

const auth = { authorization: "Bearer dev-local-key", "content-type": "application/json" };
const SECRET = "e2e-tool-secret-value-42";

describe("HTTP tools on the running stack", () => {
  it("call a loopback endpoint with the sealed header, before and after a restart", async () => {
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
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/weather`;
    const dir = mkdtempSync(join(tmpdir(), "context-chat-tools-"));
    let stack = await startStack({ persistTo: dir });
    try {
      const post = (path: string, body: unknown) =>
        fetch(`${stack.baseUrl}${path}`, { method: "POST", headers: auth, body: JSON.stringify(body) });
      const tool = await post("/v1/tools", {
        kind: "http",
        name: "forecast",
        description: "Weather forecast for a city.",
        inputSchema: { type: "object", properties: { city: { type: "string" } } },
        endpoint,
        headers: { "X-Api-Key": SECRET },
      });
      expect(tool.status).toBe(201);
      const conv = (await (
        await post("/v1/conversations", { title: "tools" })
      ).json()) as Routes["POST /v1/conversations"]["response"];
      await post(`/v1/conversations/${conv.id}/messages`, { content: `@tool tool_activate {"name":"forecast"}` });
      const call = async (city: string) => {
        const turn = (await (
          await post(`/v1/conversations/${conv.id}/messages`, { content: `@tool forecast {"city":"${city}"}` })
        ).json()) as Routes["POST /v1/conversations/{id}/messages"]["response"];
        return turn.messages.flatMap((m) => m.content).find((b) => b.type === "tool_result");
      };
      expect(await call("Paris")).toMatchObject({ content: "forecast for Paris: sunny" });
      expect(received.at(-1)!.headers["x-api-key"]).toBe(SECRET);
      expect(readFileSync(join(dir, "tool-secrets-key"), "utf8").trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);

      await stack.stop();
      stack = await startStack({ persistTo: dir });
      expect(await call("Oslo")).toMatchObject({ content: "forecast for Oslo: sunny" });
      expect(received.at(-1)!.headers["x-api-key"]).toBe(SECRET);
      expect(stack.output()).not.toContain(SECRET);
    } finally {
      await stack.stop();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
