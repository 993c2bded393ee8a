import { describe, expect, it } from "vitest";
import { ASSISTANT_DISCOUNT, asksForAssistantWords, assistantWeight } from "../../core/speaker-weight";

describe("speaker weight", () => {
  it("discounts the assistant's words unless the query asks for them", () => {
    expect(assistantWeight("How long is my daily commute?")).toBe(1 / ASSISTANT_DISCOUNT);
    expect(assistantWeight("Can you suggest a hotel in Miami?")).toBe(1 / ASSISTANT_DISCOUNT);
    for (const q of [
      "You mentioned a beer for the recipe, which one?",
      "Back to our previous conversation about chess",
      "what was the 7th job in your list",
      "We discussed binaural beats",
    ]) {
      expect(asksForAssistantWords(q)).toBe(true);
      expect(assistantWeight(q)).toBe(1);
    }
  });
  it("an explicit speaker wins over the wording", () => {
    expect(assistantWeight("How long is my commute?", "assistant")).toBe(1);
    expect(assistantWeight("You mentioned my commute", "user")).toBe(1 / ASSISTANT_DISCOUNT);
  });
});
