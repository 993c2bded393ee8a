// The Automations and API keys screens in a real browser against the running stack: an automation
// created through the form is listed and in GET /v1/automations, a bad schedule is refused in the
// form's words with the focus on the field, pause, resume, edit, runs and delete; a key's secret
// is shown once (gone after a reload), another key is revoked, the tenant's last key is refused
// with the API's 409, and revoking the key the tab is signed in with signs out. The Channel field
// offers the tenant's channels and says when a name is none of them, in the create form and in an
// automation's Edit (which moves it to another channel, a refused name kept on the field); an
// expiry the clocks skip (a daylight-saving gap, in a browser on Berlin's time) is refused on its field.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { ADMIN, api, base, KEY } from "./client";
import { browserForFile, signedInTab } from "./page-waits";

const f = browserForFile();
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const PHONE = { width: 390, height: 844 };
/** The dev tenant's one tab, shared by the tests that use it (each page load costs seconds on a busy machine). */
const kept: BrowserContext[] = [];
let shared: Page | undefined;
const devTab = async () => (shared ??= await signedInTab(f.browser(), kept));
afterAll(async () => {
  for (const c of kept) await c.close();
});

const focusedId = (p: Page) => p.evaluate(() => document.activeElement?.id ?? "");
const text = async (p: Page, selector: string) => (await p.locator(selector).textContent()) ?? "";

/** A signed-in tab whose browser keeps the time of `timezoneId` (signedInTab takes no time zone). */
async function tabIn(timezoneId: string): Promise<Page> {
  const context = await f.browser().newContext({ timezoneId, viewport: { width: 1280, height: 800 } });
  f.contexts.push(context);
  const p = await context.newPage();
  p.setDefaultTimeout(20_000);
  await p.goto(`${base()}/`, { waitUntil: "domcontentloaded", timeout: 60_000 });
  await p.fill("#api-key", KEY);
  await p.click("#signin-form button[type=submit]");
  await p.waitForSelector("#new-chat-form");
  return p;
}

/** Follows one of the sidebar's account links, as a person would, and waits for the view's form. */
async function open(p: Page, hash: "#/automations" | "#/keys", drawn: string) {
  await p.click(`#sidebar .account a[href="${hash}"]`);
  await p.waitForSelector(drawn);
  expect(await p.getAttribute(`#sidebar .account a[href="${hash}"]`, "aria-current")).toBe("page");
}

/** axe-core's serious and critical violations, and whether the page fits the phone's width. */
async function checked(p: Page): Promise<{ violations: string[]; fits: boolean }> {
  if (!(await p.evaluate(() => "axe" in window))) await p.evaluate(AXE);
  const result = await p.evaluate(async () => window.axe.run(document, { resultTypes: ["violations"] }));
  return {
    violations: result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
    fits: await p.evaluate(() => document.documentElement.scrollWidth <= innerWidth + 1),
  };
}

describe("the Automations screen", () => {
  it("creates, refuses a bad schedule on its field, pauses, resumes, edits, shows runs and deletes", async () => {
    const p = await devTab();
    await open(p, "#/automations", "#automation-form");
    expect(await p.title()).toBe("Automations · context-chat");
    // Opened from a link: the focus is on the view's heading.
    await expect.poll(() => p.evaluate(() => document.activeElement?.tagName)).toBe("H1");
    const name = `Hourly digest ${Date.now()}`;
    const channel = `ui-auto-${Date.now()}`;
    await p.fill("#auto-name", name);
    await p.fill("#auto-schedule", "every hour");
    await p.fill("#auto-prompt", "Summarize what happened in the last hour.");
    await p.fill("#auto-channel", channel);
    await p.click("#automation-create");
    await p.waitForSelector("#automation-form-status .error-line");
    const refused = await text(p, "#automation-form-status");
    expect(refused).toMatch(/^"Schedule": not a cron expression/);
    expect(await focusedId(p)).toBe("auto-schedule");
    expect(await p.getAttribute("#auto-schedule", "aria-invalid")).toBe("true");
    expect(await p.getAttribute("#automation-form-status", "role")).toBe("status");

    await p.fill("#auto-schedule", "@hourly");
    await p.click("#automation-create");
    await expect.poll(() => text(p, "#automation-form-status")).toMatch(/^Created “Hourly digest/);
    const id = (await p.locator("#automations li.automation", { hasText: name }).getAttribute("data-id")) ?? "";
    expect(id).toMatch(/^auto_/);
    const row = p.locator(`#automations li[data-id="${id}"]`);
    expect(await row.locator(".item-name").getAttribute("dir")).toBe("auto");
    expect(await row.locator(".item-prompt").getAttribute("dir")).toBe("auto");
    expect(await row.locator(".schedule").textContent()).toBe("@hourly");
    expect(await p.inputValue("#auto-name")).toBe("");
    const listed = (await api("GET", "/v1/automations?limit=100")).json.data.find((a: { id: string }) => a.id === id);
    expect(listed).toMatchObject({ name, schedule: "@hourly", channel, paused: false });
    expect(await p.getAttribute("#auto-schedule", "aria-invalid")).toBeNull();

    // Pause and resume, the focus staying on the button.
    const toggle = row.locator(".auto-toggle");
    await toggle.click();
    await expect.poll(() => toggle.textContent()).toBe("Resume");
    expect(await row.locator(".badge").textContent()).toBe("Paused");
    expect((await api("GET", `/v1/automations/${id}`)).json.paused).toBe(true);
    expect(await p.evaluate(() => document.activeElement?.classList.contains("auto-toggle"))).toBe(true);
    await toggle.click();
    await expect.poll(() => toggle.textContent()).toBe("Pause");
    expect((await api("GET", `/v1/automations/${id}`)).json.paused).toBe(false);

    // Edit: a bad schedule is named there too; a good one is saved (PATCH) and shown.
    await row.locator(".auto-edit").click();
    expect(await focusedId(p)).toBe(`edit-name-${id}`);
    await p.fill(`#edit-schedule-${id}`, "0 9 31 2 *");
    await p.click(`li[data-id="${id}"] .item-edit button[type=submit]`);
    await expect.poll(() => row.locator(".item-status").textContent()).toMatch(/^"Schedule": /);
    expect(await focusedId(p)).toBe(`edit-schedule-${id}`);
    await p.fill(`#edit-schedule-${id}`, "0 9 * * 1-5");
    await p.keyboard.press("Enter");
    await expect.poll(() => row.locator(".schedule").textContent()).toBe("0 9 * * 1-5");
    expect(await p.evaluate(() => document.activeElement?.classList.contains("auto-edit"))).toBe(true);
    expect((await api("GET", `/v1/automations/${id}`)).json).toMatchObject({ name, schedule: "0 9 * * 1-5" });

    // Runs: none yet; then a run as the API records one (failed, with its conversation and error).
    const runsButton = row.locator(".auto-runs");
    await runsButton.click();
    expect(await runsButton.getAttribute("aria-expanded")).toBe("true");
    await expect.poll(() => row.locator(".runs-status").textContent()).toBe("No runs yet.");
    await runsButton.click();
    await p.route(`**/v1/automations/${id}/runs**`, (r) =>
      r.fulfill({
        json: {
          data: [
            {
              id: "run_1",
              automationId: id,
              slot: "2026-12-07T09:00:00.000Z",
              status: "failed",
              attempts: 3,
              conversationId: "conv_fromrun",
              queuedAt: "2026-12-07T09:00:01.000Z",
              startedAt: "2026-12-07T09:00:02.000Z",
              finishedAt: "2026-12-07T09:01:00.000Z",
              usage: null,
              error: "the model had an internal error",
              stopReason: null,
              prompt: "Summarize what happened in the last hour.",
            },
          ],
          next: null,
        },
      }),
    );
    await runsButton.click();
    const run = row.locator(".runs-list li").first();
    await expect.poll(() => run.textContent()).toContain("2026-12-07 09:00 UTC");
    expect(await run.textContent()).toContain("failed");
    expect(await run.textContent()).toContain("3 attempts");
    expect(await run.locator(".run-error").textContent()).toBe("the model had an internal error");
    expect(await run.locator("a.run-conversation").getAttribute("href")).toBe("#/c/conv_fromrun");

    // Delete after a confirm: Escape keeps it, then Delete takes it from the page and the API.
    await row.locator(".auto-delete").click();
    expect(await p.evaluate(() => document.activeElement?.classList.contains("confirm-delete"))).toBe(true);
    await p.keyboard.press("Escape");
    expect(await p.evaluate(() => document.activeElement?.classList.contains("auto-delete"))).toBe(true);
    await row.locator(".auto-delete").click();
    await row.locator(".confirm-delete").click();
    await expect.poll(() => p.locator(`li[data-id="${id}"]`).count()).toBe(0);
    expect(await text(p, "#automations-status")).toBe(`Deleted “${name}”.`);
    expect((await api("GET", `/v1/automations/${id}`)).status).toBe(404);
  });

  it("offers the tenant's channels in the Channel field, says when a name is none of them, and still refuses a bad one on the field", async () => {
    const stamp = Date.now();
    const existing = `ui-picked-${stamp}`;
    expect((await api("PATCH", `/v1/channels/${existing}`, { rotationSeconds: 3600 })).status).toBe(200);
    const p = await devTab();
    // Another view first: the Automations view reads the channels when it is drawn.
    await open(p, "#/keys", "#key-form");
    await open(p, "#/automations", "#automation-form");
    expect(await p.getAttribute("#auto-channel", "list")).toBe("auto-channel-list");
    await expect.poll(() => p.locator(`#auto-channel-list option[value="${existing}"]`).count()).toBe(1);
    expect(await p.getAttribute("#auto-channel", "aria-describedby")).toBe("auto-channel-hint auto-channel-note");

    // A typo is said under the field before anything is sent; a name in another case is pointed out.
    await p.fill("#auto-channel", `ui-picket-${stamp}`);
    await expect
      .poll(() => text(p, "#auto-channel-note"))
      .toBe(`New channel: none is named “ui-picket-${stamp}” yet; the first run starts it.`);
    await p.fill("#auto-channel", existing.toUpperCase());
    await expect.poll(() => text(p, "#auto-channel-note")).toContain(`(“${existing}” is, and capitals count)`);
    // A name the API refuses is not called new: it is refused on the field once sent.
    await p.fill("#auto-channel", "-bad");
    await expect.poll(() => p.locator("#auto-channel-note").isHidden()).toBe(true);
    const name = `Picked channel ${stamp}`;
    await p.fill("#auto-name", name);
    await p.fill("#auto-schedule", "@daily");
    await p.fill("#auto-prompt", "Say hello.");
    await p.click("#automation-create");
    await expect.poll(() => text(p, "#automation-form-status")).toMatch(/^"Channel": a letter or digit first/);
    expect(await focusedId(p)).toBe("auto-channel");
    expect(await p.getAttribute("#auto-channel", "aria-invalid")).toBe("true");

    // The channel the list offers: nothing said under the field, created on it.
    await p.fill("#auto-channel", existing);
    await expect.poll(() => p.locator("#auto-channel-note").isHidden()).toBe(true);
    await p.click("#automation-create");
    await expect
      .poll(() => text(p, "#automation-form-status"))
      .toBe(`Created “${name}”: it runs at its next slot (@daily, UTC).`);
    const id = (await p.locator("#automations li.automation", { hasText: name }).getAttribute("data-id")) ?? "";
    expect((await api("GET", `/v1/automations/${id}`)).json).toMatchObject({ name, channel: existing });
    expect(await p.locator("#auto-channel-note").isHidden()).toBe(true);
    await api("DELETE", `/v1/automations/${id}`);
    await api("DELETE", `/v1/channels/${existing}`);
  });

  it("edits an automation's channel: the current one shown, the channels offered, a refused name kept on its field, only the channel sent", async () => {
    const stamp = Date.now();
    const from = `ui-from-${stamp}`;
    const to = `ui-to-${stamp}`;
    expect((await api("PATCH", `/v1/channels/${to}`, { rotationSeconds: 3600 })).status).toBe(200);
    const name = `Moving channel ${stamp}`;
    const made = await api("POST", "/v1/automations", {
      name,
      schedule: "@daily",
      prompt: "Say hello.",
      channel: from,
    });
    expect(made.status).toBe(201);
    const id: string = made.json.id;
    const p = await devTab();
    // Another view first: the Automations view lists the automation made above when it is drawn.
    await open(p, "#/keys", "#key-form");
    await open(p, "#/automations", "#automation-form");
    const row = p.locator(`#automations li[data-id="${id}"]`);
    await row.locator(".auto-edit").click();
    const input = `#edit-channel-${id}`;
    // The current channel, labelled, with the create form's hint, note and list of channels.
    expect(await p.inputValue(input)).toBe(from);
    expect(await text(p, `label[for="edit-channel-${id}"]`)).toBe("Channel");
    expect(await p.getAttribute(input, "list")).toBe("auto-channel-list");
    expect(await p.getAttribute(input, "aria-describedby")).toBe(`edit-channel-${id}-hint edit-channel-${id}-note`);
    await expect.poll(() => p.locator(`#auto-channel-list option[value="${to}"]`).count()).toBe(1);
    const patches: unknown[] = [];
    p.on("request", (r) => {
      if (r.method() === "PATCH" && r.url().endsWith(`/v1/automations/${id}`)) patches.push(r.postDataJSON());
    });

    // A name the API refuses: shown on the field as the other refusals are, what was typed kept.
    await p.fill(input, "-bad");
    await expect.poll(() => p.locator(`#edit-channel-${id}-note`).isHidden()).toBe(true);
    await p.click(`li[data-id="${id}"] .item-edit button[type=submit]`);
    await expect.poll(() => row.locator(".item-status").textContent()).toMatch(/^"Channel": a letter or digit first/);
    expect(await row.locator(".item-status .error-line").count()).toBe(1);
    expect(await focusedId(p)).toBe(`edit-channel-${id}`);
    expect(await p.getAttribute(input, "aria-invalid")).toBe("true");
    expect(await p.inputValue(input)).toBe("-bad");
    expect(patches).toEqual([{ channel: "-bad" }]);
    expect((await api("GET", `/v1/automations/${id}`)).json.channel).toBe(from);
    expect((await checked(p)).violations).toEqual([]);

    // A typo is said under the field; the channel offered is not, and is saved alone.
    await p.fill(input, `ui-tow-${stamp}`);
    await expect
      .poll(() => text(p, `#edit-channel-${id}-note`))
      .toBe(`New channel: none is named “ui-tow-${stamp}” yet; the first run starts it.`);
    await p.fill(input, to);
    await expect.poll(() => p.locator(`#edit-channel-${id}-note`).isHidden()).toBe(true);
    await p.keyboard.press("Enter");
    await expect.poll(() => row.locator(".item-meta code").last().textContent()).toBe(to);
    expect(await row.locator(".item-status").textContent()).toBe(
      `Saved: its runs now go to “${to}”; earlier runs stay in “${from}”'s conversation.`,
    );
    expect(await p.evaluate(() => document.activeElement?.classList.contains("auto-edit"))).toBe(true);
    expect(patches).toEqual([{ channel: "-bad" }, { channel: to }]);
    expect((await api("GET", `/v1/automations/${id}`)).json).toMatchObject({ name, channel: to });
    await api("DELETE", `/v1/automations/${id}`);
    await api("DELETE", `/v1/channels/${to}`);
  });
});

describe("the API keys screen", () => {
  it("shows a new key's secret once (gone after a reload) and revokes another key", async () => {
    const other = (await api("POST", "/v1/keys", { name: `ui other ${Date.now()}` })).json;
    const p = await devTab();
    await open(p, "#/keys", "#key-form");
    expect(await p.title()).toBe("API keys · context-chat");
    // The newest first (the dev tenant's own key may be pages down, after other files' keys).
    await p.waitForSelector(`#keys li[data-id="${other.key.id}"]`);

    const name = `ui laptop ${Date.now()}`;
    await p.fill("#key-name", name);
    await p.fill("#key-expires", "2031-01-02T03:04");
    await p.click("#key-create");
    await p.waitForSelector("#new-key-secret");
    const secret = await p.inputValue("#new-key-secret");
    expect(secret).toMatch(/^ck_/);
    expect(await text(p, "#new-key-warning")).toContain("it will not be shown again");
    expect(await focusedId(p)).toBe("new-key-copy");
    expect(await text(p, "#key-form-status")).toBe("Key created. Copy its secret now: it will not be shown again.");
    // Listed at once, and the secret works: the key it names, expiring when the field said (the browser's time).
    const created = p.locator("#keys li.key", { hasText: name });
    await expect.poll(() => created.count()).toBe(1);
    const expected = await p.evaluate(() => new Date("2031-01-02T03:04").toISOString());
    const mine = (await api("GET", "/v1/keys?limit=200", undefined, { key: secret })).json.data.find(
      (k) => k.current === true,
    );
    expect(mine).toMatchObject({ name, expiresAt: expected, revokedAt: null, last4: secret.slice(-4) });
    // Copy puts it on the clipboard (or, refused, selects it for the keyboard's copy).
    await p.click("#new-key-copy");
    await expect.poll(() => text(p, "#new-key-copied")).toMatch(/^(Copied\.|Copying failed)/);

    // A reload: the secret is nowhere on the page.
    await p.reload();
    await p.waitForSelector(`#keys li[data-id="${other.key.id}"]`);
    expect(await p.locator("#new-key-secret").count()).toBe(0);
    expect(await p.evaluate((s) => document.body.innerHTML.includes(s), secret)).toBe(false);

    // Another key revoked after a confirm: marked revoked, its Revoke gone, and the API agrees.
    const row = p.locator(`#keys li[data-id="${other.key.id}"]`);
    await row.locator(".key-revoke").click();
    expect(await text(p, `#keys li[data-id="${other.key.id}"] .confirm`)).toMatch(/^Revoke this key\?/);
    await row.locator(".confirm-revoke").click();
    await expect.poll(() => row.locator(".badge").last().textContent()).toBe("Revoked");
    expect(await row.locator(".item-actions").isHidden()).toBe(true);
    expect(await text(p, "#keys-status")).toContain("Revoked");
    const revoked = (await api("GET", "/v1/keys?limit=200")).json.data.find((k) => k.id === other.key.id);
    expect(revoked?.revokedAt).toEqual(expect.any(String));
    // Still signed in: the revoked key was not this tab's.
    expect(await p.locator("#signin-form").count()).toBe(0);
    await api("DELETE", `/v1/keys/${mine?.id}`);
  });

  it("the last key's revoke is refused with the API's 409; revoking the signed-in key signs out; both views pass axe on a phone", async () => {
    const tenant = (await api("POST", "/v1/admin/tenants", { name: `ui-keys-${Date.now()}` }, { key: ADMIN })).json;
    const p = await signedInTab(f.browser(), f.contexts, { key: tenant.apiKey, viewport: PHONE });
    await p.evaluate(() => (location.hash = "#/keys"));
    const own = p.locator("#keys li.key").first();
    await own.locator(".key-revoke").waitFor();
    expect(await own.locator(".badge.this-key").textContent()).toBe("This key");
    await own.locator(".key-revoke").click();
    expect(await own.locator(".confirm").textContent()).toContain("You will be signed out here");
    await own.locator(".confirm-revoke").click();
    await expect.poll(() => own.locator(".item-status").textContent()).toMatch(/last active key/);
    expect(await p.evaluate(() => document.activeElement?.classList.contains("key-revoke"))).toBe(true);

    // Both views at a phone's width in this tenant's tab: no serious axe violation, nothing sideways.
    const views: Record<string, { violations: string[]; fits: boolean }> = { keys: await checked(p) };
    await p.evaluate(() => (location.hash = "#/automations"));
    await p.waitForSelector("#automations-empty", { state: "visible" });
    // The Channel field's note quoting a new name of 64 unbroken characters wraps inside the phone.
    await p.fill("#auto-channel", "n".repeat(64));
    await p.waitForSelector("#auto-channel-note", { state: "visible" });
    views.automations = await checked(p);
    // And in the other theme.
    await p.click("#theme-toggle");
    views.automationsOtherTheme = await checked(p);
    await p.evaluate(() => (location.hash = "#/keys"));
    await own.locator(".key-revoke").waitFor();
    views.keysOtherTheme = await checked(p);
    const clean = { violations: [], fits: true };
    expect(views).toEqual({ keys: clean, automations: clean, automationsOtherTheme: clean, keysOtherTheme: clean });

    // A second key (the API's), then this tab's own key revoked: the sign-in form says it was refused.
    await api("POST", "/v1/keys", { name: "second" }, { key: tenant.apiKey });
    await p.evaluate(() => (location.hash = "#/keys"));
    const current = p.locator("#keys li.key", { has: p.locator(".badge.this-key") });
    await current.locator(".key-revoke").waitFor();
    await current.locator(".key-revoke").click();
    await current.locator(".confirm-revoke").click();
    await p.waitForSelector("#signin-form");
    expect(await text(p, "#signin-form")).toMatch(/refused/);
    expect(await p.title()).toBe("Sign in · context-chat");
    expect((await api("GET", "/v1/keys", undefined, { key: tenant.apiKey })).status).toBe(401);
  });

  it("refuses on its field an expiry the clocks skip (a daylight-saving gap), creating nothing", async () => {
    const p = await tabIn("Europe/Berlin");
    await p.evaluate(() => (location.hash = "#/keys"));
    await p.waitForSelector("#key-form");
    expect(await text(p, "#key-expires-hint")).toContain("(Europe/Berlin)");
    const name = `ui dst ${Date.now()}`;
    await p.fill("#key-name", name);
    // On 31 March 2030 Berlin's clocks go from 02:00 straight to 03:00: 02:30 never happens there.
    await p.fill("#key-expires", "2030-03-31T02:30");
    await p.click("#key-create");
    await expect
      .poll(() => text(p, "#key-form-status"))
      .toBe(
        "“Expires”: 2030-03-31 02:30 does not exist in your time zone (Europe/Berlin), the clocks jump past it that night. Choose another time: no key was created.",
      );
    expect(await p.locator("#key-form-status .error-line").count()).toBe(1);
    expect(await focusedId(p)).toBe("key-expires");
    expect(await p.getAttribute("#key-expires", "aria-invalid")).toBe("true");
    expect(await p.locator("#new-key-secret").count()).toBe(0);
    const named = async () =>
      (await api("GET", "/v1/keys?limit=200")).json.data.filter((k: { name: string | null }) => k.name === name);
    expect(await named()).toEqual([]);

    // An hour on is a time that exists: created, expiring at 03:30 summer time (01:30 UTC).
    await p.fill("#key-expires", "2030-03-31T03:30");
    await p.click("#key-create");
    await p.waitForSelector("#new-key-secret");
    expect(await p.getAttribute("#key-expires", "aria-invalid")).toBeNull();
    const made = await named();
    expect(made).toMatchObject([{ name, expiresAt: "2030-03-31T01:30:00.000Z" }]);
    await api("DELETE", `/v1/keys/${made[0].id}`);
  });
});
