// A refused union (a turn's content, a tool result's content: a string or an array of blocks)
// names the problem of the branch the input took: a bad block's field, an unknown block type, or,
// when no branch takes the input's type, every type that would have been accepted.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toolResultsBodySchema } from "../../core/client-tools";
import { conversationTurnBodySchema, turnBodySchema } from "../../core/turn-input";
import { describeZodError } from "../../core/validation";

const refusal = (schema: z.ZodType, value: unknown) => {
  const r = schema.safeParse(value);
  return r.success ? "accepted" : describeZodError(r.error);
};
const turn = (content: unknown) => refusal(conversationTurnBodySchema, { content });
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("union refusals name the real problem", () => {
  it("a turn's block names its own field, not the string branch", () => {
    expect(turn([{ type: "text" }])).toBe("content.0.text: required");
    expect(turn([{ type: "text", text: 5 }])).toBe("content.0.text: Invalid input: expected string, received number");
    expect(
      turn([
        { type: "text", text: "ok" },
        { type: "text", text: "ok", extra: 1 },
      ]),
    ).toBe("unknown field content.1.extra");
  });

  it("a block of no or another type lists the types a turn takes", () => {
    expect(turn([{ text: "hi" }])).toBe("content.0.type: must be one of text, image");
    expect(
      turn([{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } }]),
    ).toBe("content.0.type: must be one of text, image");
  });

  it("an image by URL names its source", () => {
    const message = turn([{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }]);
    expect(message).toMatch(/^content\.0\.source\.type: Invalid input: expected "base64"/);
    expect(message).not.toMatch(/expected string, received array/);
    expect(turn([{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }])).toBe("accepted");
  });

  it("input of neither type names both", () => {
    expect(turn(5)).toBe("content: Invalid input: expected string or array, received number");
    expect(refusal(turnBodySchema, {})).toBe("content: required (string or array)");
  });

  it("a client tool result's blocks are named the same way", () => {
    const results = (content: unknown) => refusal(toolResultsBodySchema, { results: [{ tool_use_id: "t1", content }] });
    expect(results([{ type: "text" }])).toBe("results.0.content.0.text: required");
    expect(results([{ type: "tool_use" }])).toBe("results.0.content.0.type: must be one of text, image");
    expect(results({})).toBe("results.0.content: Invalid input: expected string or array, received object");
  });

  it("applies to any union, nested ones included", () => {
    const schema = z.strictObject({
      a: z.union([z.number(), z.strictObject({ b: z.union([z.boolean(), z.array(z.string())]) })]),
    });
    expect(refusal(schema, { a: { b: [1] } })).toBe("a.b.0: Invalid input: expected string, received number");
    expect(refusal(schema, { a: "x" })).toBe("a: Invalid input: expected number or object, received string");
    const source = z.union([
      z.strictObject({ type: z.literal("base64"), media_type: z.string(), data: z.string() }),
      z.strictObject({ type: z.literal("url"), url: z.url() }),
    ]);
    expect(refusal(source, { type: "url", url: "not a url" })).toBe("url: Invalid URL");
  });
});

describe("a plain union of object kinds told by their type", () => {
  const source = z.union([
    z.strictObject({ type: z.literal("base64"), media_type: z.string(), data: z.string().min(1) }),
    z.strictObject({ type: z.literal("url"), url: z.string().url() }),
  ]);
  it("names every kind when the value is of none, not the nearest branch's fields", () => {
    expect(refusal(source, { type: "file", file_id: "file_1" })).toBe("type: must be one of base64, url");
    expect(refusal(source, { type: "bogus" })).toBe("type: must be one of base64, url");
  });
  it("names the field of the kind the value is", () => {
    expect(refusal(source, { type: "url" })).toBe("url: required");
    expect(refusal(source, { type: "base64", media_type: "image/png", data: "" })).toMatch(/^data: /);
  });
});
