// The API keys page and the manage pages' status lines, after review HZ: revoking this tab's key
// answered after Sign out and another tenant's sign-in leaves the new person signed in; a key
// created while the person went to another view shows its secret when they come back; the Revoke
// buttons of unnamed keys say which key each revokes; and at phone width a long unbroken name in a
// status line wraps instead of scrolling the page sideways. On the Projects page a rename answered
// after the person moved on names no other tab, and an upload refused for a key signed out meanwhile
// signs nobody else out. A listing longer than a page brings the next one with Load more.
import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { ADMIN, api } from "./client";
import { browserForFile, signedInTab } from "./page-waits";

const f = browserForFile();
const PHONE = { width: 390, height: 844 };

/** Holds the requests of `method` on `url` until `release()`; `seen()` once one arrived. */
async function hold(p: Page, url: string, method: string) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let seen = false;
  await p.route(url, async (route: Route) => {
    if (route.request().method() !== method) return route.continue();
    seen = true;
    await gate;
    await route.continue();
  });
  return { release, seen: () => seen };
}

/** A tenant of its own with a second key (so the first one can be revoked). */
async function tenant(name: string): Promise<string> {
  const t = (await api("POST", "/v1/admin/tenants", { name: `${name}-${Date.now()}` }, { key: ADMIN })).json;
  await api("POST", "/v1/keys", { name: "spare" }, { key: t.apiKey });
  return t.apiKey;
}

describe("the API keys page after review HZ", () => {
  it("revoking this tab's key, answered after Sign out and another tenant's sign-in, leaves the new tenant signed in", async () => {
    const a = await tenant("ia-a");
    const b = await tenant("ia-b");
    const p = await signedInTab(f.browser(), f.contexts, { key: a });
    await p.evaluate(() => (location.hash = "#/keys"));
    const current = p.locator("#keys li.key", { has: p.locator(".badge.this-key") });
    await current.locator(".key-revoke").waitFor();
    const held = await hold(p, "**/v1/keys/**", "DELETE");
    await current.locator(".key-revoke").click();
    await current.locator(".confirm-revoke").click();
    await expect.poll(() => held.seen()).toBe(true);
    await p.click("#sign-out");
    await p.waitForSelector("#signin-form");
    await p.fill("#api-key", b);
    await p.click("#signin-form button[type=submit]");
    await p.waitForSelector("#new-chat-form");
    held.release();
    // A's key is revoked for good: the answer arrived.
    await expect.poll(async () => (await api("GET", "/v1/keys", undefined, { key: a })).status).toBe(401);
    await p.waitForTimeout(2000);
    expect(await p.locator("#signin-form").count()).toBe(0);
    expect(await p.locator("#new-chat-form").count()).toBe(1);
    expect(await p.evaluate(() => sessionStorage.getItem("context-chat.apiKey"))).toBe(b);
  });

  it("a key created while the person went to another view shows its secret when they come back", async () => {
    const a = await tenant("ia-away");
    const p = await signedInTab(f.browser(), f.contexts, { key: a });
    await p.evaluate(() => (location.hash = "#/keys"));
    await p.waitForSelector("#key-form");
    const held = await hold(p, "**/v1/keys", "POST");
    await p.fill("#key-name", "made while away");
    await p.click("#key-create");
    await expect.poll(() => held.seen()).toBe(true);
    await p.click('#sidebar .account a[href="#/automations"]');
    await p.waitForSelector("#automation-form");
    held.release();
    await p.waitForTimeout(1500);
    await p.click('#sidebar .account a[href="#/keys"]');
    await p.waitForSelector("#new-key-secret");
    expect(await p.textContent("#new-key-heading")).toBe("New key: made while away");
    const secret = await p.inputValue("#new-key-secret");
    const mine = (await api("GET", "/v1/keys", undefined, { key: secret })).json.data.find((k) => k.current === true);
    expect(mine?.name).toBe("made while away");
    // Shown this once: Done, another view and back, and it is gone.
    await p.click("#new-key-done");
    await p.click('#sidebar .account a[href="#/automations"]');
    await p.waitForSelector("#automation-form");
    await p.click('#sidebar .account a[href="#/keys"]');
    await p.waitForSelector("#keys li.key");
    expect(await p.locator("#new-key-secret").count()).toBe(0);
  });

  it("the Revoke buttons of unnamed keys each name their key", async () => {
    const a = await tenant("ia-unnamed");
    await api("POST", "/v1/keys", {}, { key: a });
    await api("POST", "/v1/keys", {}, { key: a });
    const p = await signedInTab(f.browser(), f.contexts, { key: a });
    await p.evaluate(() => (location.hash = "#/keys"));
    await expect.poll(() => p.locator("#keys li.key").count()).toBe(4);
    const names = await p.locator("#keys .key-revoke").evaluateAll((bs) => bs.map((b) => b.getAttribute("aria-label")));
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/…[A-Za-z0-9_-]{4}\b/);
  });
});

describe("the manage pages at phone width", () => {
  it("long unbroken names in the status lines wrap instead of scrolling main sideways", async () => {
    const p = await signedInTab(f.browser(), f.contexts, { viewport: PHONE });
    const fits = () =>
      p.evaluate(() => {
        const m = document.querySelector("main") as HTMLElement;
        return m.scrollWidth <= m.clientWidth + 1;
      });
    await p.evaluate(() => (location.hash = "#/automations"));
    await p.waitForSelector("#automation-form");
    await p.fill("#auto-name", "W".repeat(100));
    await p.fill("#auto-schedule", "@hourly");
    await p.fill("#auto-prompt", "x");
    await p.fill("#auto-channel", `ia-${Date.now()}`);
    await p.click("#automation-create");
    await expect.poll(() => p.locator("#automation-form-status").textContent()).toMatch(/^Created/);
    const autoId = await p.locator("#automations li.automation").first().getAttribute("data-id");
    const automation = await fits();
    await p.evaluate(() => (location.hash = "#/projects"));
    await p.waitForSelector("#project-form");
    await p.fill("#project-name", "P".repeat(200));
    await p.click("#project-create");
    await expect.poll(() => p.locator("#project-form-status").textContent()).toMatch(/^Created/);
    const project = await fits();
    await p.evaluate(() => (location.hash = "#/keys"));
    await p.waitForSelector("#key-form");
    await p.fill("#key-name", "K".repeat(100));
    await p.click("#key-create");
    await p.waitForSelector("#new-key-secret");
    await p.click("#new-key-done");
    const row = p.locator("#keys li.key").first();
    await row.locator(".key-revoke").click();
    await row.locator(".confirm-revoke").click();
    await expect.poll(() => p.locator("#keys-status").textContent()).toMatch(/^Revoked/);
    const key = await fits();
    if (autoId) await api("DELETE", `/v1/automations/${autoId}`);
    expect({ automation, project, key }).toEqual({ automation: true, project: true, key: true });
  });
});

describe("the Projects page after review HZ", () => {
  it("a project rename answered after the person moved on, or signed out, names no other view's tab", async () => {
    const proj = (await api("POST", "/v1/projects", { name: `hz project ${Date.now()}` })).json;
    const p = await signedInTab(f.browser(), f.contexts);
    const renameHeld = async (to: string) => {
      await p.evaluate((id) => (location.hash = `#/projects/${id}`), proj.id);
      await p.waitForSelector("#project-heading");
      const held = await hold(p, `**/v1/projects/${proj.id}`, "PATCH");
      await p.click("#project-rename");
      await p.fill(`#rename-${proj.id}`, to);
      await p.keyboard.press("Enter");
      await expect.poll(() => held.seen()).toBe(true);
      return held;
    };
    const moved = await renameHeld("Acquisition of Initech");
    await p.click('#sidebar .account a[href="#/keys"]');
    await p.waitForSelector("#key-form");
    moved.release();
    await expect
      .poll(async () => (await api("GET", `/v1/projects/${proj.id}`)).json.name)
      .toBe("Acquisition of Initech");
    await p.waitForTimeout(500);
    expect(await p.title()).toBe("API keys · context-chat");
    await p.unroute(`**/v1/projects/${proj.id}`);
    const signedOut = await renameHeld("Layoffs list Q1");
    await p.click("#sign-out");
    await p.waitForSelector("#signin-form");
    signedOut.release();
    await expect.poll(async () => (await api("GET", `/v1/projects/${proj.id}`)).json.name).toBe("Layoffs list Q1");
    await p.waitForTimeout(500);
    expect(await p.title()).toBe("Sign in · context-chat");
  });

  it("a project upload refused (401) for the last key after another tenant signed in leaves the new tenant signed in", async () => {
    const a = await tenant("hz-ua");
    const b = await tenant("hz-ub");
    const proj = (await api("POST", "/v1/projects", { name: "A's project" }, { key: a })).json;
    const p = await signedInTab(f.browser(), f.contexts, { key: a });
    await p.evaluate((id) => (location.hash = `#/projects/${id}`), proj.id);
    await p.waitForSelector("#project-file");
    const held = await hold(p, `**/v1/projects/${proj.id}/files**`, "POST");
    await p.setInputFiles("#project-file", { name: "a.txt", mimeType: "text/plain", buffer: Buffer.from("hello") });
    await expect.poll(() => held.seen()).toBe(true);
    await p.click("#sign-out");
    await p.waitForSelector("#signin-form");
    await p.fill("#api-key", b);
    await p.click("#signin-form button[type=submit]");
    await p.waitForSelector("#new-chat-form");
    // A's key is revoked meanwhile: the held upload is refused with a 401 for it.
    const mine = (await api("GET", "/v1/keys", undefined, { key: a })).json.data.find((k) => k.current === true);
    expect((await api("DELETE", `/v1/keys/${mine?.id}`, undefined, { key: a })).status).toBe(200);
    held.release();
    await p.waitForTimeout(2000);
    expect(await p.locator("#signin-form").count()).toBe(0);
    expect((await api("GET", "/v1/keys", undefined, { key: b })).status).toBe(200);
  });
});

describe("a listing longer than one page", () => {
  it("Load more brings the next page of automations and keeps the focus on what it brought", async () => {
    const key = await tenant("paging");
    for (let i = 0; i < 21; i++) {
      const r = await api(
        "POST",
        "/v1/automations",
        { name: `daily ${i}`, schedule: "@daily", prompt: "summarize", channel: `paging-${i}`, paused: true },
        { key },
      );
      expect(r.status).toBe(201);
    }
    const p = await signedInTab(f.browser(), f.contexts, { key });
    await p.evaluate(() => (location.hash = "#/automations"));
    await expect.poll(() => p.locator("#automations li.automation").count()).toBe(20);
    expect(await p.locator("#automations-more").isVisible()).toBe(true);
    await p.focus("#automations-more");
    await p.keyboard.press("Enter");
    await expect.poll(() => p.locator("#automations li.automation").count()).toBe(21);
    expect(await p.locator("#automations-more").isHidden()).toBe(true);
    // The focus went to the control of the automation the last page brought, not the top of the page.
    expect(
      await p.evaluate(
        () =>
          document.activeElement?.closest("li.automation") ===
          document.querySelector("#automations li.automation:last-child"),
      ),
    ).toBe(true);
  });
});
