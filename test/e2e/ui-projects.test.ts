// The Projects screens in a real browser against the running stack: a project created through the
// form (an empty or invisible name refused on its field), renamed in place, opened; a text file
// uploaded and listed with its note (as GET /v1/projects/:id has it), an unreadable one refused
// before upload, a file deleted after a confirm; a new chat started in the project, created with
// its projectId and its first turn answered; both pages pass axe at a phone's width in both themes.
// A project's settings edited on its page (a refusal named on its field by label, the focus there),
// the project deleted from its page after a confirm, and a new chat in a project deleted meanwhile
// said plainly with the message kept. And Settings names `settings.serverTools` and
// `settings.refusalFallbackModel` by their labels.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, transcript } from "./client";
import { browserForFile, signedInTab, turnsSettled } from "./page-waits";

const f = browserForFile();
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const PHONE = { width: 390, height: 844 };

const focusedId = (p: Page) => p.evaluate(() => document.activeElement?.id ?? "");
const text = async (p: Page, selector: string) => (await p.locator(selector).textContent()) ?? "";

/** axe-core's serious and critical violations, and whether the page fits the viewport's width. */
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

const file = (name: string, body: string, mimeType = "text/plain") => ({
  name,
  mimeType,
  buffer: Buffer.from(body),
});

describe("the Projects screens", () => {
  it("creates, renames, uploads a file with its note, deletes one and starts a chat in the project", async () => {
    const p = await signedInTab(f.browser(), f.contexts);
    await p.click('#sidebar .account a[href="#/projects"]');
    await p.waitForSelector("#project-form");
    expect(await p.title()).toBe("Projects · context-chat");
    expect(await p.getAttribute('#sidebar .account a[href="#/projects"]', "aria-current")).toBe("page");
    await expect.poll(() => p.evaluate(() => document.activeElement?.tagName)).toBe("H1");

    // Empty, then a name of only an invisible character: named on the field, nothing created.
    await p.click("#project-create");
    expect(await text(p, "#project-form-status")).toBe("Fill in “Name”: nothing was created.");
    expect(await focusedId(p)).toBe("project-name");
    await p.fill("#project-name", "\u200b");
    await p.click("#project-create");
    await expect.poll(() => text(p, "#project-form-status")).toMatch(/^"Name": /);
    expect(await p.getAttribute("#project-name", "aria-invalid")).toBe("true");
    expect(await p.getAttribute("#project-form-status", "role")).toBe("status");

    const name = `Research ${Date.now()}`;
    await p.fill("#project-name", name);
    await p.click("#project-create");
    await expect.poll(() => text(p, "#project-form-status")).toBe(`Created “${name}”: open it to add files.`);
    const row = p.locator("#projects li.project", { hasText: name });
    const id = (await row.getAttribute("data-id")) ?? "";
    expect(id).toMatch(/^proj_/);
    expect(await row.locator("a.item-name").getAttribute("dir")).toBe("auto");
    expect((await api("GET", `/v1/projects/${id}`)).json).toMatchObject({ id, name });

    // Rename in place: Escape backs out, Enter saves (PATCH), the focus back on Rename.
    await row.locator(".project-rename-button").click();
    expect(await focusedId(p)).toBe(`rename-${id}`);
    await p.keyboard.press("Escape");
    expect(await p.evaluate(() => document.activeElement?.classList.contains("project-rename-button"))).toBe(true);
    await row.locator(".project-rename-button").click();
    const renamed = `${name} (renamed)`;
    await p.fill(`#rename-${id}`, renamed);
    await p.keyboard.press("Enter");
    await expect.poll(() => row.locator("a.item-name").textContent()).toBe(renamed);
    expect(await p.evaluate(() => document.activeElement?.classList.contains("project-rename-button"))).toBe(true);
    expect((await api("GET", `/v1/projects/${id}`)).json.name).toBe(renamed);

    // Its page: the name, no files yet, its settings.
    await row.locator("a.item-name").click();
    await expect.poll(() => text(p, "#project-heading")).toBe(renamed);
    expect(await p.title()).toBe(`${renamed} · context-chat`);
    expect(await p.getAttribute('#sidebar .account a[href="#/projects"]', "aria-current")).toBe("page");
    expect(await p.locator("#project-files-empty").isVisible()).toBe(true);
    expect(await text(p, "#project-settings-heading")).toBe("Settings");

    // A text file goes up and is listed with its note, the note GET /v1/projects/:id gives.
    await p.setInputFiles("#project-file", file("field-notes.txt", "Otters hold hands while they sleep.\n"));
    const listed = p.locator("#project-files li.project-file", { hasText: "field-notes.txt" });
    await listed.waitFor();
    expect(await text(p, "#project-files-status")).toContain("Uploaded “field-notes.txt”");
    const stored = (await api("GET", `/v1/projects/${id}`)).json;
    expect(stored.files).toHaveLength(1);
    expect(stored.files[0]).toMatchObject({ name: "field-notes.txt", note: expect.any(String) });
    await listed.locator(".file-note summary").click();
    expect(await listed.locator(".note-text").textContent()).toBe(stored.files[0].note);
    expect(await p.locator("#project-uploads li").count()).toBe(0);

    // A file the server cannot read is refused before it is sent.
    await p.setInputFiles("#project-file", file("blob.bin", "\u0000\u0001", "application/octet-stream"));
    await expect.poll(() => text(p, "#project-uploads li.failed")).toContain("can't be read here");
    await p.click("#project-uploads li.failed .remove");
    expect(await p.locator("#project-uploads li").count()).toBe(0);

    // A second file, deleted after a confirm (Escape keeps it): gone from the page and the API.
    await p.setInputFiles("#project-file", file("scratch.md", "# scratch\n"));
    const scratch = p.locator("#project-files li.project-file", { hasText: "scratch.md" });
    await scratch.waitFor();
    await scratch.locator(".file-delete").click();
    await p.keyboard.press("Escape");
    expect(await p.evaluate(() => document.activeElement?.classList.contains("file-delete"))).toBe(true);
    await scratch.locator(".file-delete").click();
    await scratch.locator(".confirm-delete").click();
    await expect.poll(() => scratch.count()).toBe(0);
    expect(await text(p, "#project-files-status")).toContain("Deleted “scratch.md”");
    expect((await api("GET", `/v1/projects/${id}`)).json.files.map((x: { name: string }) => x.name)).toEqual([
      "field-notes.txt",
    ]);

    // A new chat in the project: its name on the new-chat page, the conversation made with its
    // projectId, the first turn answered.
    await p.click("#project-new-chat");
    await p.waitForSelector("#new-chat-form");
    expect(await p.evaluate(() => location.hash)).toBe(`#/?project=${id}`);
    await expect.poll(() => text(p, "#new-chat-project")).toContain(renamed);
    expect(await p.title()).toBe(`New chat · ${renamed} · context-chat`);
    await p.fill("#composer", "What is in this project?");
    await p.click("#send");
    await p.waitForFunction(() => /^#\/c\/conv_/.test(location.hash));
    await turnsSettled(p, 1);
    const conv = (await p.evaluate(() => location.hash)).slice("#/c/".length);
    expect((await api("GET", `/v1/conversations/${conv}`)).json.projectId).toBe(id);
    const messages = await transcript(conv);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("both pages pass axe at a phone's width in both themes; Settings names server tools and the fallback model", async () => {
    const project = (await api("POST", "/v1/projects", { name: `Phone ${Date.now()}` })).json;
    await api(
      "POST",
      `/v1/projects/${project.id}/files?name=${encodeURIComponent("a-rather-long-file-name.csv")}`,
      "a,b\n1,2\n",
      {
        headers: { "content-type": "text/csv" },
      },
    );
    const p = await signedInTab(f.browser(), f.contexts, { viewport: PHONE });
    await p.evaluate(() => (location.hash = "#/projects"));
    await p.locator(`#projects li[data-id="${project.id}"]`).waitFor();
    const views: Record<string, { violations: string[]; fits: boolean }> = { projects: await checked(p) };
    await p.evaluate((id) => (location.hash = `#/projects/${id}`), project.id);
    await p.locator("#project-files li.project-file").waitFor();
    await p.locator(".file-note summary").click();
    // The settings form with "Advanced" open, and the project's delete asking to confirm.
    await p.click("#project-settings-form .advanced summary");
    await p.click("#project-delete");
    await p.locator("#project-delete-confirm").waitFor();
    views.project = await checked(p);
    await p.click("#theme-toggle");
    views.projectOtherTheme = await checked(p);
    await p.evaluate(() => (location.hash = "#/projects"));
    await p.locator(`#projects li[data-id="${project.id}"]`).waitFor();
    views.projectsOtherTheme = await checked(p);
    const clean = { violations: [], fits: true };
    expect(views).toEqual({ projects: clean, project: clean, projectOtherTheme: clean, projectsOtherTheme: clean });

    // Settings: a refusal naming a setting the form has no field for shows its label, not its key.
    const conv = (await api("POST", "/v1/conversations", { title: "labels" })).json.id;
    await p.evaluate((id) => (location.hash = `#/c/${id}/settings`), conv);
    await p.waitForSelector("#settings-form");
    const refuse = (message: string) =>
      p.route(`**/v1/conversations/${conv}`, (r) =>
        r.request().method() === "PATCH"
          ? r.fulfill({ status: 400, json: { error: { type: "invalid_request", message } } })
          : r.fallback(),
      );
    await refuse("settings.serverTools: claude-opus-5 has no web_fetch (it offers web_search)");
    await p.fill("#set-title", "labels, renamed");
    await p.click("#settings-form button[type=submit]");
    await expect
      .poll(() => text(p, "#settings-status"))
      .toBe('"Server tools": claude-opus-5 has no web_fetch (it offers web_search)');
    await p.unroute(`**/v1/conversations/${conv}`);
    await refuse("settings.refusalFallbackModel: must be another model than settings.model");
    await p.click("#settings-form button[type=submit]");
    await expect
      .poll(() => text(p, "#settings-status"))
      .toBe('"Refusal fallback model": must be another model than "Model"');
    expect(await focusedId(p)).toBe("set-model");
  });

  it("edits a project's settings: a refusal named on its field, the focus there; the API's own keys kept", async () => {
    const project = (
      await api("POST", "/v1/projects", { name: `Settings ${Date.now()}`, settings: { summaryMaxChars: 5000 } })
    ).json;
    const at = `/v1/projects/${project.id}` as const;
    const p = await signedInTab(f.browser(), f.contexts);
    await p.evaluate((id) => (location.hash = `#/projects/${id}`), project.id);
    await p.waitForSelector("#project-settings-form");
    // As the project holds them: every field the account's, the key set through the API listed.
    expect(await p.inputValue("#project-set-model")).toBe("");
    expect(await p.inputValue("#project-set-tailMessages")).toBe("");
    expect(await text(p, "#project-settings-form .project-settings")).toBe("summaryMaxChars5000");

    // A refusal naming two settings shows their labels; the focus goes to the first, "Advanced" opened.
    await p.click("#project-settings-form .advanced summary");
    await p.fill("#project-set-compactTargetRatio", "0.8");
    await p.click("#project-settings-form .advanced summary");
    await p.click("#project-settings-save");
    await expect
      .poll(() => text(p, "#project-settings-status"))
      .toBe('"Compact down to (share of window)": must be smaller than "Compact at (share of window)"');
    expect(await focusedId(p)).toBe("project-set-compactTargetRatio");
    expect(await p.getAttribute("#project-set-compactTargetRatio", "aria-invalid")).toBe("true");
    expect(await p.getAttribute("#project-settings-form .advanced", "open")).toBe("");
    expect((await api("GET", at)).json.settings).toEqual({ summaryMaxChars: 5000 });

    // Saved: a model, a number, how thinking shows and the model's own effort; the API's key kept.
    const model = await p.locator("#project-set-model option").nth(1).getAttribute("value");
    await p.fill("#project-set-compactTargetRatio", "");
    await p.fill("#project-set-tailMessages", "12");
    await p.selectOption("#project-set-model", model ?? "");
    await p.selectOption("#project-set-thinkingDisplay", "omitted");
    await p.selectOption("#project-set-effort", "default");
    await p.click("#project-settings-save");
    await expect
      .poll(() => text(p, "#project-settings-status"))
      .toBe("Saved: the project's new conversations start with these.");
    expect(await p.getAttribute("#project-set-compactTargetRatio", "aria-invalid")).toBeNull();
    expect((await api("GET", at)).json.settings).toEqual({
      summaryMaxChars: 5000,
      model,
      tailMessages: 12,
      thinkingDisplay: "omitted",
      effort: null,
    });
    await p.click("#project-settings-save");
    await expect.poll(() => text(p, "#project-settings-status")).toBe("Nothing changed.");

    // Back to the account's: the key goes from the project's settings.
    await p.selectOption("#project-set-model", "");
    await p.fill("#project-set-tailMessages", "");
    await p.click("#project-settings-save");
    await expect
      .poll(async () => (await api("GET", at)).json.settings)
      .toEqual({ summaryMaxChars: 5000, thinkingDisplay: "omitted", effort: null });
  });

  it("deletes a project from its page after a confirm, then the list says so", async () => {
    const name = `Doomed ${Date.now()}`;
    const project = (await api("POST", "/v1/projects", { name })).json;
    const p = await signedInTab(f.browser(), f.contexts);
    await p.evaluate((id) => (location.hash = `#/projects/${id}`), project.id);
    await p.click("#project-delete");
    expect(await focusedId(p)).toBe("project-delete-confirm");
    await p.keyboard.press("Escape");
    expect(await focusedId(p)).toBe("project-delete");
    expect((await api("GET", `/v1/projects/${project.id}`)).status).toBe(200);

    await p.click("#project-delete");
    await p.click("#project-delete-confirm");
    await p.waitForFunction(() => location.hash === "#/projects");
    await expect
      .poll(() => text(p, "#projects-status"))
      .toBe(`Deleted “${name}” and its files: its conversations stay, without them.`);
    expect(await p.locator(`#projects li[data-id="${project.id}"]`).count()).toBe(0);
    expect(await p.evaluate(() => document.activeElement?.tagName)).toBe("H1");
    expect((await api("GET", `/v1/projects/${project.id}`)).status).toBe(404);
  });

  it("a new chat in a project deleted meanwhile says so plainly, links to Projects and keeps the message", async () => {
    const project = (await api("POST", "/v1/projects", { name: `Gone ${Date.now()}` })).json;
    const p = await signedInTab(f.browser(), f.contexts);
    await p.evaluate((id) => (location.hash = `#/?project=${id}`), project.id);
    await expect.poll(() => text(p, "#new-chat-project")).toContain(project.name);
    // Deleted elsewhere (another tab) while this page is open.
    expect((await api("DELETE", `/v1/projects/${project.id}`)).status).toBe(204);
    await p.fill("#composer", "Is anything still here?");
    await p.click("#send");
    const said = p.locator("#new-chat-form [role=alert]");
    await expect.poll(() => said.textContent()).toBe("This project no longer exists. All projects");
    expect(await said.locator("a").getAttribute("href")).toBe("#/projects");
    expect(await p.inputValue("#composer")).toBe("Is anything still here?");
    expect(await p.evaluate(() => location.hash)).toBe(`#/?project=${project.id}`);
  });
});
