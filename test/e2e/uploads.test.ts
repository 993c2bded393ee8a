// Hostile uploads against the running stack: a body cut short of its Content-Length and a body
// with no length at all leave nothing behind.
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { api, base, newConversation } from "./client";

function rawRequest(lines: string[], body: string, closeEarly: boolean): Promise<string> {
  const url = new URL(base());
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(`${lines.join("\r\n")}\r\n\r\n${body}`);
      if (closeEarly) setTimeout(() => socket.destroy(), 300);
    });
    let out = "";
    socket.on("data", (d) => (out += d));
    socket.on("close", () => resolve(out));
    socket.on("error", () => resolve(out));
    setTimeout(() => socket.destroy(), 5000);
  });
}

describe("uploads", () => {
  it("leave nothing when the body stops short, and refuse a body without a length", async () => {
    const id = await newConversation();
    const path = `/v1/conversations/${id}/attachments?name=cut.txt`;
    await rawRequest(
      [
        `POST ${path} HTTP/1.1`,
        "Host: 127.0.0.1",
        "Authorization: Bearer dev-local-key",
        "Content-Type: text/plain",
        "Content-Length: 100000",
      ],
      "only a little",
      true,
    );
    const chunked = await rawRequest(
      [
        `POST /v1/conversations/${id}/attachments?name=chunked.txt HTTP/1.1`,
        "Host: 127.0.0.1",
        "Authorization: Bearer dev-local-key",
        "Content-Type: text/plain",
        "Transfer-Encoding: chunked",
        "Connection: close",
      ],
      "5\r\nhello\r\n0\r\n\r\n",
      false,
    );
    expect(chunked).toMatch(/^HTTP\/1\.1 411/);
    expect(chunked).toContain("length_required");
    await new Promise((r) => setTimeout(r, 500));
    const list = await api("GET", `/v1/conversations/${id}/attachments`);
    expect(list.json.data).toEqual([]);
    const t = await api("GET", `/v1/conversations/${id}/messages`);
    expect(t.json.data).toEqual([]);
  });
});
