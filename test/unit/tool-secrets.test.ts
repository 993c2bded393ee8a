// Secret tool inputs (secretInputs): withheld from what is stored, and never echoed by an error,
// whatever message a tool or a library it calls lets through.
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";

const echo = (name: string, secret: boolean) => ({
  name,
  core: true,
  capability: name,
  description: name,
  input: z.strictObject({ file: z.string(), password: z.string().optional() }),
  ...(secret ? { secretInputs: ["password"] } : {}),
  run: async ({ file, password }: { file: string; password?: string }) => ({
    content: `cannot open ${file} with password ${password}`,
    isError: true,
    blocks: [{ type: "text" as const, text: `tried ${password}` }],
  }),
});

describe("secret tool inputs", () => {
  const registry = new ToolRegistry().register(echo("locked_read", true)).register(echo("plain_read", false));
  const ctx = { activeTools: [] } as unknown as ToolContext;

  it("the stored input has the secret replaced; other fields and other tools are untouched", () => {
    expect(registry.withhold("locked_read", { file: "a.pdf", password: "s3cret" })).toEqual({
      file: "a.pdf",
      password: "[password withheld]",
    });
    expect(registry.withhold("locked_read", { file: "a.pdf" })).toEqual({ file: "a.pdf" });
    expect(registry.withhold("plain_read", { file: "a.pdf", password: "s3cret" })).toEqual({
      file: "a.pdf",
      password: "s3cret",
    });
  });

  it("the call runs with the secret, and its error does not repeat it", async () => {
    const out = await registry.run("locked_read", { file: "a.pdf", password: "s3cret" }, ctx);
    expect(out.content).toBe("cannot open a.pdf with password [password withheld]");
    expect(out.blocks).toEqual([{ type: "text", text: "tried [password withheld]" }]);
    expect((await registry.run("plain_read", { file: "a.pdf", password: "s3cret" }, ctx)).content).toContain("s3cret");
  });
});
