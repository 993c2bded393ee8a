// Tool secrets at rest: sealed under the Worker secret, bound to their owner, never readable
// without the key, refused clearly when the key is not configured.
import { describe, expect, it } from "vitest";
import { open, seal, ToolSecretsNotConfigured } from "../../services/tools/secret-box";

const key = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)));
const env = { TOOL_SECRETS_KEY: key(7) };

describe("secret box", () => {
  it("round-trips, and the sealed form does not contain the secret", async () => {
    const sealed = await seal(env, "t1:tool_a:headers", '{"Authorization":"Bearer sk-live-123"}');
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain("sk-live-123");
    expect(await open(env, "t1:tool_a:headers", sealed)).toBe('{"Authorization":"Bearer sk-live-123"}');
  });

  it("round-trips a value of several hundred kilobytes (the largest headers a tool may have, and more)", async () => {
    // 20 headers of 4,096 characters, each up to 3 bytes in UTF-8, seal to about 250 KB: far past
    // the arguments one call may take, so the encoding must not spread the bytes into one call.
    const headers = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`x-h${i}`, "€".repeat(4_096)]));
    const big = JSON.stringify({ ...headers, tail: "z".repeat(600_000) });
    const sealed = await seal(env, "t1:tool_a:headers", big);
    expect(await open(env, "t1:tool_a:headers", sealed)).toBe(big);
  });

  it("two seals of one value differ (a fresh IV each time)", async () => {
    expect(await seal(env, "o", "x")).not.toBe(await seal(env, "o", "x"));
  });

  it("does not open for another owner or under another key", async () => {
    const sealed = await seal(env, "t1:tool_a:headers", "secret");
    await expect(open(env, "t2:tool_a:headers", sealed)).rejects.toThrow();
    await expect(open({ TOOL_SECRETS_KEY: key(8) }, "t1:tool_a:headers", sealed)).rejects.toThrow();
    await expect(open(env, "t1:tool_a:headers", "plain text")).rejects.toThrow(/not a sealed/);
  });

  it("without the Worker secret, sealing is refused with a clear reason", async () => {
    await expect(seal({}, "o", "x")).rejects.toBeInstanceOf(ToolSecretsNotConfigured);
    await expect(seal({ TOOL_SECRETS_KEY: "  " }, "o", "x")).rejects.toThrow(/TOOL_SECRETS_KEY/);
    await expect(seal({ TOOL_SECRETS_KEY: btoa("short") }, "o", "x")).rejects.toThrow(/32 bytes/);
  });
});
