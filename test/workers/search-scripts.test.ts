// GET /v1/search in scripts unicode61 alone serves badly (services/cortex/script-terms.ts): Thai,
// Lao, Khmer and Myanmar written without spaces; a Latin word or number written against CJK or
// Hangul; a word spelled without its diacritics (Greek capitals, е for ё, unvowelled Arabic); and a
// word whose vowel signs are combining marks (Devanagari), matched and highlighted whole.
import { describe, expect, it } from "vitest";
import { newTenant } from "./helpers";
import { indexed, search } from "./search-imported";

const ids = async (key: string, q: string) => (await search(key, q)).data.map((h) => h.id);

describe("search across scripts", { timeout: 120_000 }, () => {
  it("finds a word inside a Thai, Lao, Khmer or Myanmar run (no spaces)", async () => {
    const key = await newTenant();
    const [th, lo, km, my] = await indexed(
      key,
      ["พรุ่งนี้ฉันจะไปกรุงเทพเพื่อประชุม", "ຂ້ອຍຈະໄປວຽງຈັນມື້ອື່ນ", "ខ្ញុំនឹងទៅភ្នំពេញថ្ងៃស្អែក", "ကျွန်တော်မနက်ဖြန်ရန်ကုန်ကိုသွားမယ်", "zzmarker"],
      "zzmarker",
    );
    const got = {
      กรุงเทพ: await ids(key, "กรุงเทพ"),
      ประชุม: await ids(key, "ประชุม"),
      ວຽງຈັນ: await ids(key, "ວຽງຈັນ"),
      ភ្នំពេញ: await ids(key, "ភ្នំពេញ"),
      ရန်ကုန်: await ids(key, "ရန်ကုန်"),
      // The marks count: the same letters with other vowel signs are another word.
      กริงเทพ: await ids(key, "กริงเทพ"),
    };
    expect(got).toEqual({ กรุงเทพ: [th], ประชุม: [th], ວຽງຈັນ: [lo], ភ្នំពេញ: [km], ရန်ကုန်: [my], กริงเทพ: [] });
  });

  it("finds a Latin word or a number written against CJK or Hangul", async () => {
    const key = await newTenant();
    const [ja, ko, zh] = await indexed(
      key,
      ["昨日Pythonでスクリプトを書いた", "어제 GitHub에 코드를 올렸어요", "我在2024年去了北京", "zzmarker"],
      "zzmarker",
    );
    const got = {
      Python: await ids(key, "Python"),
      GitHub: await ids(key, "GitHub"),
      "2024": await ids(key, "2024"),
      スクリプト: await ids(key, "スクリプト"),
    };
    expect(got).toEqual({ Python: [ja], GitHub: [ko], "2024": [zh], スクリプト: [ja] });
  });

  it("finds a word spelled without its diacritics: Greek capitals, е for ё, viet, unvowelled Arabic", async () => {
    const key = await newTenant();
    const [el, ru, vi, ar, plain] = await indexed(
      key,
      [
        "Ο Οδυσσέας ταξίδεψε στην Αθήνα",
        "Мы встретились у ёлки",
        "Tôi sống ở Việt Nam",
        "اسمه مُحَمَّد وهو طبيب",
        "Купили елки вчера",
        "zzmarker",
      ],
      "zzmarker",
    );
    const got = {
      ΑΘΗΝΑ: await ids(key, "ΑΘΗΝΑ"),
      αθηνα: await ids(key, "αθηνα"),
      ΟΔΥΣΣΕΑΣ: await ids(key, "ΟΔΥΣΣΕΑΣ"),
      елки: (await ids(key, "елки")).sort(),
      viet: await ids(key, "viet"),
      محمد: await ids(key, "محمد"),
      مُحَمَّد: await ids(key, "مُحَمَّد"),
      Αθήνα: await ids(key, "Αθήνα"),
    };
    expect(got).toEqual({
      ΑΘΗΝΑ: [el],
      αθηνα: [el],
      ΟΔΥΣΣΕΑΣ: [el],
      елки: [ru, plain].sort(),
      viet: [vi],
      محمد: [ar],
      مُحَمَّد: [ar],
      Αθήνα: [el],
    });
    // ё finds е too, and the snippet marks the word as written.
    const yo = (await search(key, "ёлки")).data;
    expect(yo.map((h) => h.id).sort()).toEqual([ru, plain].sort());
    const hit = yo.find((h) => h.id === plain);
    expect(hit?.matches.map(([a, b]) => hit.snippet.slice(a, b))).toEqual(["[елки]"]);
  });

  it("keeps a Devanagari word's vowel signs in it: matched and highlighted whole", async () => {
    const key = await newTenant();
    const [heart, , delhiId] = await indexed(
      key,
      ["मेरा दिल टूट गया", "ह द", "मैं कल दिल्ली गया था", "zzmarker"],
      "zzmarker",
    );
    const dal = await ids(key, "दाल"); // lentils: no text says it
    const hindi = await ids(key, "हिंदी"); // no text says it
    const dil = await ids(key, "दिल");
    const delhi = (await search(key, "दिल्ली")).data;
    const marked = delhi[0]?.matches.map(([a, b]) => delhi[0].snippet.slice(a, b));
    expect({ dal, hindi, dil, delhi: delhi.map((h) => h.id), marked }).toEqual({
      dal: [],
      hindi: [],
      dil: [heart],
      delhi: [delhiId],
      marked: ["[दिल्ली]"],
    });
  });
  it("finds a word mixing scripts by all of it: 2024年, Pythonで, GitHub에 (not their CJK or Hangul alone)", async () => {
    const key = await newTenant();
    const [zh, , ja, , ko] = await indexed(
      key,
      [
        "我在2024年去了北京",
        "今年很好",
        "昨日Pythonで書いた",
        "ここで休む",
        "어제 GitHub에 올렸어요",
        "서울에 갔다",
        "zzmarker",
      ],
      "zzmarker",
    );
    const got = {
      "2024年": await ids(key, "2024年"),
      Pythonで: await ids(key, "Pythonで"),
      GitHub에: await ids(key, "GitHub에"),
    };
    expect(got).toEqual({ "2024年": [zh], Pythonで: [ja], GitHub에: [ko] });
  });

  it("folds only the diacritics it states: Cyrillic й, ї and ў stay letters of their own", async () => {
    const key = await newTenant();
    const [war, warrior, home, mine, uk, be] = await indexed(
      key,
      ["Началась война", "Я видел воина", "это мой дом", "это мои книги", "їжак", "ўсё", "zzmarker"],
      "zzmarker",
    );
    const got = {
      война: await ids(key, "война"),
      воина: await ids(key, "воина"),
      мои: await ids(key, "мои"),
      мой: await ids(key, "мой"),
      іжак: await ids(key, "іжак"),
      їжак: await ids(key, "їжак"),
      усё: await ids(key, "усё"),
      ўсё: await ids(key, "ўсё"),
    };
    expect(got).toEqual({
      война: [war],
      воина: [warrior],
      мои: [mine],
      мой: [home],
      іжак: [],
      їжак: [uk],
      усё: [],
      ўсё: [be],
    });
  });

  it("marks only the query's Devanagari word in a snippet, not another word of the same pieces", async () => {
    const key = await newTenant();
    const [text] = await indexed(key, ["आज दाल बनी और मेरा दिल खुश है", "zzmarker"], "zzmarker");
    const hits = (await search(key, "दाल")).data;
    const hit = hits.find((h) => h.id === text);
    expect({
      ids: hits.map((h) => h.id),
      marked: hit?.matches.map(([a, b]) => hit.snippet.slice(a, b)),
      snippet: hit?.snippet,
    }).toEqual({ ids: [text], marked: ["[दाल]"], snippet: "आज [दाल] बनी और मेरा दिल खुश है" });
  });

  it("finds a one-letter Thai or Myanmar query only as that letter, not with other vowel signs", async () => {
    const key = await newTenant();
    const [, , bare] = await indexed(key, ["ကိုကို", "ฉันกินข้าว", "ก ขา", "zzmarker"], "zzmarker");
    const got = { က: await ids(key, "က"), ก: await ids(key, "ก") };
    expect(got).toEqual({ က: [], ก: [bare] });
  });
});
