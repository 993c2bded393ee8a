// The settings form's "Compact down to" field (a refusal names a field by its label and focuses it),
// and right-to-left text: Hebrew replies, list items, prompts and composers read right to left, while
// English text is laid out as before.
import { describe, expect, it } from "vitest";
import { api, base } from "./client";
import { browserForFile, signedInTab } from "./page-waits";

const f = browserForFile();

const statusText = async (p: import("playwright-core").Page) => {
  await p.waitForFunction(() => /\S/.test(document.querySelector("#settings-status")?.textContent ?? ""));
  return (await p.locator("#settings-status").textContent()) ?? "";
};

describe("settings: compacting down to", () => {
  it("'Compact at' 0.4 saves with 'Compact down to' 0.3; a refusal names the field by its label and focuses it", async () => {
    const { p, id } = await f.openChat("rtl-settings");
    await p.goto(`${base()}/#/c/${id}/settings`);
    await p.waitForSelector("#settings-form");
    await p.click("#settings-form details.advanced summary");
    expect(await p.inputValue("#set-compactTargetRatio")).toBe("0.5");
    expect(await p.locator("label.field", { has: p.locator("#set-compactTargetRatio") }).textContent()).toBe(
      "Compact down to (share of window)",
    );
    // Below the target alone: refused, in the form's words, the focus on the field to change.
    await p.fill("#set-compactTriggerRatio", "0.4");
    await p.click("#settings-form button[type=submit]");
    const refused = await statusText(p);
    expect(refused).toContain('"Compact down to (share of window)"');
    expect(refused).toContain('"Compact at (share of window)"');
    expect(refused).not.toContain("settings.");
    expect(await p.evaluate(() => document.activeElement?.id)).toBe("set-compactTargetRatio");
    // Both lowered: saved, and the API holds them.
    await p.fill("#set-compactTargetRatio", "0.3");
    await p.click("#settings-form button[type=submit]");
    await expect.poll(() => p.locator("#settings-status").textContent()).toBe("Saved.");
    const meta = (await api("GET", `/v1/conversations/${id}`)).json;
    expect(meta.settings).toMatchObject({ compactTriggerRatio: 0.4, compactTargetRatio: 0.3 });
  });
});

/** A Hebrew table far wider than a phone: its first column is the right-most. */
const WIDE_COLUMNS = Array.from({ length: 12 }, (_, i) => `עמודה${i}`);
const WIDE_TABLE = [
  `| ${WIDE_COLUMNS.join(" | ")} |`,
  `|${WIDE_COLUMNS.map(() => "---").join("|")}|`,
  `| ${WIDE_COLUMNS.map((c, i) => (i ? `https://example.com/${"x".repeat(30)}` : c)).join(" | ")} |`,
].join("\n");

describe("right-to-left text", () => {
  it("a Hebrew reply, its list and the prompt read right to left; English stays left to right; composers follow their text", async () => {
    const messages = [
      { role: "user", content: "מה שלומך?" },
      {
        role: "assistant",
        content: `שלום עולם, זו שורה בעברית.\n\n- פריט ראשון.\n- פריט שני.\n\nAn English line.\n\n- one\n- two\n\n${WIDE_TABLE}`,
      },
    ];
    const r = await api("POST", "/v1/conversations/import?title=rtl", JSON.stringify({ messages }), {
      headers: { "content-type": "application/json" },
    });
    const p = await signedInTab(f.browser(), f.contexts, { viewport: { width: 390, height: 844 } });
    expect(await p.getAttribute("#composer", "dir")).toBe("auto");
    await p.goto(`${base()}/#/c/${r.json.id}`);
    await p.waitForSelector(".turn .md p");
    const m = await p.evaluate(() => {
      const paras = Array.from(document.querySelectorAll<HTMLElement>(".md p"));
      const hebrew = paras.find((e) => e.textContent?.startsWith("שלום")) as HTMLElement;
      const english = paras.find((e) => e.textContent?.startsWith("An English")) as HTMLElement;
      const text = hebrew.firstChild as Text;
      const left = (i: number) => {
        const range = document.createRange();
        range.setStart(text, i);
        range.setEnd(text, i + 1);
        return range.getBoundingClientRect().left;
      };
      /** Where a list's first item sits in its list: its indent on each side. */
      const indent = (ul: Element) => {
        const li = ul.querySelector("li") as HTMLElement;
        const a = ul.getBoundingClientRect();
        const b = li.getBoundingClientRect();
        return { dir: getComputedStyle(li).direction, left: b.left - a.left, right: a.right - b.right };
      };
      const [rtlList, ltrList] = Array.from(document.querySelectorAll(".md ul"));
      const wrap = (document.querySelector(".md .table-wrap") as HTMLElement).getBoundingClientRect();
      const firstHeader = (document.querySelector(".md th") as HTMLElement).getBoundingClientRect();
      return {
        para: getComputedStyle(hebrew).direction,
        fullStopLeftOfFirst: left(text.length - 1) < left(0),
        english: getComputedStyle(english).direction,
        rtlList: indent(rtlList),
        ltrList: indent(ltrList),
        prompt: getComputedStyle(document.querySelector(".msg.user .text") as HTMLElement).direction,
        composer: document.querySelector("#composer")?.getAttribute("dir"),
        // A wide table scrolls from its start: its first column (the right-most) is in view.
        firstHeaderInView: firstHeader.left >= wrap.left - 1 && firstHeader.right <= wrap.right + 1,
      };
    });
    expect(m.para).toBe("rtl");
    expect(m.fullStopLeftOfFirst).toBe(true);
    expect(m.english).toBe("ltr");
    // The bullet's indent is on the item's start side: the right for Hebrew, the left (1.5rem) for English.
    expect(m.rtlList).toEqual({ dir: "rtl", left: 0, right: 24 });
    expect(m.ltrList).toEqual({ dir: "ltr", left: 24, right: 0 });
    expect(m.prompt).toBe("rtl");
    expect(m.composer).toBe("auto");
    expect(m.firstHeaderInView).toBe(true);
    await p.fill("#composer", "שלום");
    expect(await p.$eval("#composer", (e) => e.matches(":dir(rtl)"))).toBe(true);
  });
});
