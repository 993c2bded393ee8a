// The automatic title's request and clean-up (core/title.ts), and the offline model's answer to it:
// deterministic, from the first prompt, so the server's titles can be asserted end to end.
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { catalogEntry } from "../../core/models/lookup";
import { buildTitleRequest, cleanTitle, DEFAULT_TITLE, firstExchange, TITLE_MAX_CHARS } from "../../core/title";
import type { StoredMessage } from "../../core/types";
import { makeClient, type Params, rejection, textOf } from "./offline-model-client";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const at = "2026-01-01T00:00:00Z";
const msg = (seq: number, role: "user" | "assistant", text: string): StoredMessage => ({
  id: `m${seq}`,
  seq,
  role,
  createdAt: at,
  content: [{ type: "text", text }],
});

beforeEach(() => resetOfflineCache());

describe("automatic titles", () => {
  it("the first exchange is the first prompt with text and the first reply with text after it", () => {
    expect(firstExchange([msg(1, "user", "hi")])).toBeNull();
    expect(
      firstExchange([
        msg(1, "user", "  "),
        msg(2, "assistant", "?"),
        msg(3, "user", "Plan a trip"),
        msg(4, "assistant", "Sure."),
      ]),
    ).toEqual({ prompt: "Plan a trip", reply: "Sure." });
  });

  it("asks for a title in a small call: no tools, a short max_tokens, the least thinking the model allows", () => {
    const request = buildTitleRequest(SONNET, { prompt: "How do rivers carve canyons?", reply: "Slowly." });
    expect(request.tools).toEqual([]);
    expect(request.max_tokens).toBeLessThanOrEqual(100);
    expect(request.thinking?.type).not.toBe("adaptive");
    expect(JSON.stringify(request.messages)).toContain("How do rivers carve canyons?");
  });

  it("cleans the model's answer into a title, or nothing", () => {
    expect(cleanTitle('"River Canyons."\n')).toBe("River Canyons");
    expect(cleanTitle("Title: **Tide tables**")).toBe("Tide tables");
    expect(cleanTitle("\n\n  Lisbon   trip planning  \nsecond line")).toBe("Lisbon trip planning");
    expect(cleanTitle("   ")).toBeNull();
    expect(cleanTitle(DEFAULT_TITLE)).toBeNull();
    expect(cleanTitle("word ".repeat(100))!.length).toBeLessThanOrEqual(TITLE_MAX_CHARS);
  });

  it("cuts a long title between characters, and never keeps half a pair", () => {
    // An emoji across the 200th UTF-16 unit: a cut there would keep its high surrogate alone.
    const cut = cleanTitle(`${"a".repeat(199)}😀 is this`)!;
    expect(cut.isWellFormed()).toBe(true);
    expect(cut).toBe("a".repeat(199));
    const unspaced = cleanTitle("😀".repeat(150))!;
    expect(unspaced.isWellFormed()).toBe(true);
    expect(unspaced.length).toBeLessThanOrEqual(TITLE_MAX_CHARS);
    expect(cleanTitle("Tides \ud83d and rivers")).toBe("Tides \ufffd and rivers");
  });

  it("keeps out what a title POST or PATCH refuses: control characters, bidi overrides, nothing visible", () => {
    expect(cleanTitle("\u202egnp.exe rivers and canyons")).toBe("gnp.exe rivers and canyons");
    expect(cleanTitle("Tides\u0007 and \u2066rivers\u2069")).toBe("Tides and rivers");
    expect(cleanTitle("\u200b\u200b")).toBeNull();
    expect(cleanTitle("\u202e\u202d")).toBeNull();
  });

  it("the offline model answers a title request with the first prompt's first six words, directives left out", async () => {
    const request = buildTitleRequest(SONNET, {
      prompt: "how do rivers carve canyons over millions of years?\n@reply-chars 400",
      reply: "Event garden narrow quick.",
    });
    const reply = await makeClient().messages.create(request as unknown as Params);
    expect(textOf(reply)).toBe("How do rivers carve canyons over");
    expect(cleanTitle(textOf(reply))).toBe("How do rivers carve canyons over");
    const short = await makeClient().messages.create(
      buildTitleRequest(SONNET, { prompt: "Hello there!", reply: "Hi." }) as unknown as Params,
    );
    expect(textOf(short)).toBe("Hello there");
    // The first call loads the offline model's tokenizer table.
  }, 30_000);

  it("a `@model-error … summarize` line in the first prompt fails the title call, not a plain one", async () => {
    const failing = buildTitleRequest(SONNET, { prompt: "Hello\n@model-error 500 summarize", reply: "Hi." });
    expect((await rejection(makeClient().messages.create(failing as unknown as Params))).status).toBe(500);
    const plain = buildTitleRequest(SONNET, { prompt: "Hello\n@model-error 500", reply: "Hi." });
    expect(textOf(await makeClient().messages.create(plain as unknown as Params))).toBe("Hello");
  });
});
