// A refused socket frame echoes its `ref` only when a valid frame could carry it: 1 to 64
// characters of well-formed text. A ref that is itself the problem (a lone surrogate) is not sent
// back, or the server's own error frame would carry the malformed text it refused.
import { describe, expect, it } from "vitest";
import { parseClientFrame } from "../../durable-objects/conversation/socket-frames";

describe("a refused frame's ref", () => {
  it("is echoed when it is well-formed", () => {
    const frame = parseClientFrame(JSON.stringify({ type: "send", content: "", ref: "r-1" }));
    expect(frame).toMatchObject({ ok: false, ref: "r-1" });
  });

  it("is not echoed when it holds a lone surrogate", () => {
    const frame = parseClientFrame('{"type":"send","content":"hi","ref":"r\\ud800"}');
    expect(frame.ok).toBe(false);
    expect(frame).not.toHaveProperty("ref");
  });

  it("is not echoed when another field is refused and the ref is malformed", () => {
    const frame = parseClientFrame('{"type":"send","content":"","ref":"\\udc00x"}');
    expect(frame.ok).toBe(false);
    expect(frame).not.toHaveProperty("ref");
  });
});
