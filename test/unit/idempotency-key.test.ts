// The idempotency key's format and the request fingerprint a key is bound to.
import { describe, expect, it } from "vitest";
import { idempotencyKeyProblem, requestFingerprint } from "../../core/idempotency-key";

describe("idempotency keys", () => {
  it("accepts 1 to 255 printable ASCII characters with no space at either end", () => {
    for (const good of [
      "a",
      "k".repeat(255),
      "8e2f0c3a-5b1d-4f7e-9a6b-1c2d3e4f5a6b",
      "with inner space",
      '~!@#$%^&*()_+{}|:"<>?',
    ])
      expect(idempotencyKeyProblem(good), good).toBeNull();
    for (const bad of ["", "k".repeat(256), " lead", "trail ", "tab\there", "new\nline", "caf\u00e9", "\u0000"])
      expect(idempotencyKeyProblem(bad), JSON.stringify(bad)).toMatch(/printable ASCII|at most 255/);
  });

  it("fingerprints what a request asks for, not how its JSON was spelled", async () => {
    const a = await requestFingerprint({ content: [{ type: "text", text: "hi" }] });
    expect(await requestFingerprint({ content: [{ text: "hi", type: "text" }] })).toBe(a);
    expect(await requestFingerprint({ content: [{ type: "text", text: "hi" }], attachments: undefined })).toBe(a);
    expect(await requestFingerprint({ content: [{ type: "text", text: "hi!" }] })).not.toBe(a);
    expect(await requestFingerprint({ content: [{ type: "text", text: "hi" }], attachments: ["att_1"] })).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });
});
