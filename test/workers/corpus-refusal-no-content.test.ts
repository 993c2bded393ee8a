// The corpus log holds ids and sizes, never content (docs/api-notes.md: a deleted conversation's
// "corpus log lines (ids and sizes, no content)" are kept). A refusal's explanation is the model's
// own words about the request, so its line gives the explanation's length, not its text.
import { describe, expect, it } from "vitest";
import { api, createConversation, eventually, send } from "./helpers";

describe("a refusal's corpus line", () => {
  it("names the turn, model and category, and the explanation's length, not its words", async () => {
    const id = await createConversation();
    const r = await send(id, "the crimson ledger\n@stop refusal cyber");
    expect(r.json.stop_reason).toBe("refusal");
    const day = new Date().toISOString().slice(0, 10);
    const log = await eventually(async () => {
      const res = await api("GET", `/v1/corpus/${day}`);
      // An event is a "## <time> <name>" heading and its "- field: value" lines.
      const event = res.text.split("\n## ").find((e) => e.includes("model.refused") && e.includes(id));
      return event ?? null;
    });
    // The offline model's explanation: "The offline model was asked to refuse this request (@stop refusal)."
    expect(log).toContain("- category: cyber");
    expect(log).toContain("- explanationChars: 67");
    expect(log).not.toContain("asked to refuse");
    expect(log).not.toMatch(/^- explanation:/m);
  });
});
