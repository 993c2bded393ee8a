// Offline model summarization: fold prompts read as the conversation they quote, extractive
// summaries with every heading, within the cap.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { turnStateSystemPrompt } from "../../core/compactor";
import { makeClient, type Params, textOf, TOOLS, toolUses } from "./offline-model-client";
import { catalogEntry } from "../../core/models/lookup";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

beforeEach(() => resetOfflineCache());

describe("summarization requests", () => {
  const HEADINGS = ["TASK", "PROGRESS", "REMAINING", "DATA", "DECISIONS"];
  // The compactor's real state prompt: the offline model reads its cap and headings from the text.
  const system = (cap: number) => turnStateSystemPrompt(cap);
  const conversation: Anthropic.MessageParam[] = [
    { role: "user", content: "Reconcile invoice INV-2024-0042 against ledger.csv. Start with March." },
    { role: "assistant", content: "Read 2 tool results (25,012 and 25,012 chars)." },
    { role: "user", content: "We decided to use the March total of 18,250 dollars. Keep going." },
    { role: "assistant", content: "Noted the decision." },
    { role: "user", content: 'Next, draft report.pdf for account acct_7781.\n@tool read_file {"path":"x"}' },
  ];

  it("reads a fold prompt's pasted transcript as the conversation it quotes, carrying the previous summary", async () => {
    const { buildFoldRequest } = await import("../../core/fold");
    const at = "2026-01-01T00:00:00Z";
    const folded = [
      {
        id: "m1",
        seq: 7,
        role: "user" as const,
        createdAt: at,
        content: [{ type: "text" as const, text: "Book the flight to Oslo on FL-2291. Window seat please." }],
      },
      {
        id: "m2",
        seq: 8,
        role: "assistant" as const,
        createdAt: at,
        content: [{ type: "text" as const, text: "Booked FL-2291 with seat 14A." }],
      },
    ];
    const previous = "- Plan the Norway trip in June.\n\nIdentifiers:\n- trip_0042";
    const request = buildFoldRequest({ model: SONNET, previousSummary: previous, folded, maxChars: 1_000 });
    const message = await makeClient().messages.create(request as unknown as Params);
    const text = textOf(message);
    expect(text).not.toMatch(/previous_summary|new_messages|\[seq \d+/);
    expect(text).toContain("- Plan the Norway trip in June.");
    expect(text).toContain("- Book the flight to Oslo on FL-2291.");
    expect(text).toContain("- Booked FL-2291 with seat 14A.");
    expect(text).toMatch(/Identifiers:\n- trip_0042, FL-2291/);
  });

  it("never cuts a character in half: a summary of emoji-only messages is well-formed at every cap", async () => {
    const { buildFoldRequest } = await import("../../core/fold");
    const at = "2026-01-01T00:00:00Z";
    const folded = [1, 2, 3, 4].map((seq) => ({
      id: `m${seq}`,
      seq,
      role: (seq % 2 ? "user" : "assistant") as "user" | "assistant",
      createdAt: at,
      content: [{ type: "text" as const, text: "😀".repeat(150 + seq) }],
    }));
    const broken: number[] = [];
    for (let maxChars = 100; maxChars <= 140; maxChars++) {
      const request = buildFoldRequest({ model: SONNET, previousSummary: null, folded, maxChars });
      const text = textOf(await makeClient().messages.create(request as unknown as Params));
      if (!text.isWellFormed()) broken.push(maxChars);
    }
    expect(broken).toEqual([]);
  });

  it("produces an extractive summary with every section, within the cap", async () => {
    const message = await makeClient().messages.create({
      model: "offline-200k",
      max_tokens: 2_000,
      system: system(700),
      messages: conversation,
      tools: TOOLS,
    });
    const text = textOf(message);
    expect(text.length).toBeLessThanOrEqual(700);
    expect(toolUses(message)).toEqual([]);
    const positions = HEADINGS.map((heading) => text.indexOf(`${heading}:\n`));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const section = (heading: string) => text.slice(text.indexOf(`${heading}:\n`)).split("\n\n")[0];
    expect(section("TASK")).toContain("Reconcile invoice INV-2024-0042 against ledger.csv.");
    expect(section("REMAINING")).toContain("Next, draft report.pdf for account acct_7781.");
    expect(section("DECISIONS")).toContain("We decided to use the March total of 18,250 dollars.");
    for (const id of ["INV-2024-0042", "ledger.csv", "18,250", "report.pdf", "acct_7781"])
      expect(section("DATA")).toContain(id);
  });

  it("never exceeds a tight cap and keeps all headings when they fit", async () => {
    const message = await makeClient().messages.create({
      model: "offline-200k",
      max_tokens: 2_000,
      system: system(120),
      messages: conversation,
    });
    const text = textOf(message);
    expect(text.length).toBeLessThanOrEqual(120);
    for (const heading of HEADINGS) expect(text).toContain(`${heading}:`);
  });

  it("cuts even the headings when the cap is smaller than they are", async () => {
    const message = await makeClient().messages.create({
      model: "offline-200k",
      max_tokens: 2_000,
      system: system(20),
      messages: conversation,
    });
    expect(textOf(message).length).toBeLessThanOrEqual(20);
    expect(textOf(message)).toMatch(/^TASK:/);
  });
});
