// GET /v1/search on Chinese and Japanese text written without spaces: FTS5's unicode61 makes a
// whole run of Han, kana (or Hangul) one token, so a word inside the run ("東京タワー" inside
// "私は東京タワーに行きました") was never found; the index now also holds each run's character
// bigrams (d1-migrations/cortex-shard/0004_cjk_terms.sql), and a query word is looked up as its
// bigrams too. The Latin control ranks as it did, and no snippet shows the bigrams.
import { describe, expect, it } from "vitest";
import { newTenant } from "./helpers";
import { indexed, search } from "./search-imported";

const JAPANESE = "私は東京タワーに行きました";
const CHINESE = "我昨天在北京吃了烤鸭";
const LATIN = "The harbour lantern was lit by the quokka keeper.";
/** Bigrams of the two texts, none of which is a word of either text as written. */
const BIGRAMS = ["私は", "は東", "京タ", "タワ", "ワー", "ーに", "我昨", "昨天", "天在", "在北", "京吃", "烤鸭"];

describe("search in Chinese and Japanese text without spaces", { timeout: 60_000 }, () => {
  it("finds a word inside a run of Han and kana, and ranks a Latin query as before", async () => {
    const key = await newTenant();
    const [ja, zh, latin] = await indexed(key, [JAPANESE, CHINESE, LATIN], "quokka");
    // The whole runs were found before too.
    expect((await search(key, JAPANESE)).data.map((h) => h.id)).toEqual([ja]);

    const tower = await search(key, "東京タワー");
    expect(tower.data.map((h) => h.id)).toEqual([ja]);
    const beijing = await search(key, "北京");
    expect(beijing.data.map((h) => h.id)).toEqual([zh]);
    expect((await search(key, "東京")).data.map((h) => h.id)).toEqual([ja]);
    expect((await search(key, "烤鸭 harbour")).data.map((h) => h.id).sort()).toEqual([zh, latin].sort());

    // The snippet is the text as written, from its start: never the bigrams the index adds.
    for (const hit of [...tower.data, ...beijing.data]) {
      expect([JAPANESE, CHINESE]).toContain(hit.snippet);
      expect(hit.matches).toEqual([]);
      for (const b of BIGRAMS) expect(hit.snippet.split(/\s+/)).not.toContain(b);
    }

    // The Latin control: found, marked and scored as a Latin text in a tenant of three rows is.
    const harbour = await search(key, "harbour lantern");
    expect(harbour.data.map((h) => h.id)).toEqual([latin]);
    expect(harbour.data[0].snippet).toBe("The [harbour] [lantern] was lit by the quokka keeper.");
  });

  it("finds a one-character word anywhere in a run, and never a word across two runs", async () => {
    const key = await newTenant();
    const [cute, likes, , apart, comma, shut] = await indexed(
      key,
      ["我的猫很可爱 quokka", "猫が好きです", "我有一本书", "上海 and 海关", "上海、海关", "他在上海关门了 wombat"],
      "wombat",
    );
    const ids = async (q: string) => (await search(key, q)).data.map((h) => h.id).sort();
    expect(await ids("猫")).toEqual([cute, likes].sort());
    expect(await ids("我的")).toEqual([cute]);
    expect(await ids("可爱")).toEqual([cute]);
    // 上海关 is a run of the last text only: the others hold 上海 and 海关 as two runs.
    expect(await ids("上海关")).toEqual([shut]);
    expect(await ids("上海")).toEqual([apart, comma, shut].sort());
  });
});
