// The cortex's ranking for questions in words: any subject term matches (the page is never cut
// short to the few documents holding every word), more terms rank higher, function words are
// ignored, identifiers stay exact, and a paged walk is the one-page ranking without repeats.
import { describe, expect, it } from "vitest";
import { api, eventually, newTenant } from "./helpers";

const search = async (key: string, q: string, extra = "") =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}&kind=memory${extra}`, undefined, { key })).json;

describe("search ranking", () => {
  it("fills the page with any-term matches, those holding more subject terms higher", async () => {
    const key = await newTenant();
    const both = (
      await api("POST", "/v1/memory", { text: "I finally bought the road bike, a Canyon, in March." }, { key })
    ).json.id;
    const bikeOnly = [];
    for (let i = 0; i < 4; i++)
      bikeOnly.push(
        (await api("POST", "/v1/memory", { text: `Bike maintenance note ${i}: chain oil and tyres.` }, { key })).json
          .id,
      );
    const roadOnly = (await api("POST", "/v1/memory", { text: "The road to the cabin was closed." }, { key })).json.id;
    await api("POST", "/v1/memory", { text: "Unrelated: the invoice INV-20931 totals 318.40 EUR." }, { key });
    const r = await eventually(async () =>
      (await search(key, "Which road bike was it?")).data.length >= 6
        ? await search(key, "Which road bike was it?")
        : null,
    );
    const ids = r.data.map((h) => h.id);
    for (const b of bikeOnly) expect(ids.indexOf(both)).toBeLessThan(ids.indexOf(b));
    expect(new Set(ids)).toEqual(new Set([both, ...bikeOnly, roadOnly]));
    // Identifiers stay exact among words.
    expect((await search(key, "which amount was on INV-20931")).data[0].snippet).toContain("INV-20931");
    // Paged two at a time, the walk is the one-page ranking, with no hit twice.
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await search(key, "Which road bike was it?", `&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      walked.push(...page.data.map((h) => String(h.id)));
      cursor = page.next === null ? null : String(page.next);
      // The cursor is the hits before the next page, nothing else (no ranking mode).
      if (cursor !== null) expect(cursor).toBe(String(walked.length));
    } while (cursor);
    expect(walked).toEqual(ids);
    // A cursor of the earlier `and:N` / `or:N` form pages on from N: the mode is read and ignored.
    const fromTwo = (await search(key, "Which road bike was it?", "&limit=2&cursor=2")).data.map((h) => String(h.id));
    expect(fromTwo).toEqual(ids.slice(2, 4));
    for (const old of ["and:2", "or:2"])
      expect(
        (await search(key, "Which road bike was it?", `&limit=2&cursor=${old}`)).data.map((h) => String(h.id)),
      ).toEqual(fromTwo);
    // Anything else is a 400 naming the cursor.
    for (const bad of ["xor:2", "and:", "-1", "2:and"]) {
      const r = await api("GET", `/v1/search?q=bike&cursor=${encodeURIComponent(bad)}`, undefined, { key });
      expect(r.status, bad).toBe(400);
      expect(r.json.error?.message, bad).toMatch(/cursor.*not a search cursor/);
    }
  });

  it("ranks the person's words above the assistant's restatement, unless the assistant's words are asked for", async () => {
    const key = await newTenant();
    const exchange = async (user: string, assistant: string) => {
      const conv = (await api("POST", "/v1/conversations", {}, { key })).json.id;
      const { messages } = (
        await api(
          "POST",
          `/v1/conversations/${conv}/import`,
          {
            messages: [
              { role: "user", text: user },
              { role: "assistant", text: assistant },
            ],
          },
          { key },
        )
      ).json;
      return messages.map((m) => m.id);
    };
    const [said] = await exchange(
      "My commute to work takes 45 minutes by train.",
      "A 45 minute train commute to work is long: commute time on the train to work is good for reading, and a commute to work by train beats driving to work.",
    );
    const [changed] = await exchange("Update: I now cycle on my commute to work.", "Nice, cycling is healthy.");
    const q = (text: string, extra = "") =>
      eventually(async () => {
        const r = (
          await api("GET", `/v1/search?q=${encodeURIComponent(text)}&kind=message${extra}`, undefined, { key })
        ).json;
        return r.data.length >= 3 ? r.data.map((h) => h.messageId) : null;
      });
    const mine = await q("How long is my commute to work?");
    expect(mine.slice(0, 2).sort()).toEqual([said, changed].sort());
    const reply = mine[2];
    expect((await q("How long is my commute to work?", "&said=assistant"))[0]).toBe(reply);
    expect((await q("You said something about my commute to work"))[0]).toBe(reply);
    expect((await api("GET", "/v1/search?q=commute&said=model", undefined, { key })).status).toBe(400);
  });
});
