// The web UI reads every list page through `data` (the one shape of docs/api-notes.md, "Listing and
// paging"), never through a route's older field name (`conversations`, `messages`, `cards`,
// `results`, `models`, ...), so those fields can go without the UI noticing.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), "../.."));
const JS = "workers/chat/public/js";
const LEGACY = [
  "conversations",
  "messages",
  "cards",
  "attachments",
  "notes",
  "episodes",
  "automations",
  "channels",
  "projects",
  "files",
  "results",
  "tools",
  "models",
];

/** The list routes, ids written as template holes: `/v1/conversations/${id}/messages`. */
const LIST_ROUTE =
  /^\/v1\/(conversations|search|models|memory|memory\/episodes|automations|channels|projects|conversations\/\$\{\w+\}\/(messages|timeline|attachments)|projects\/\$\{\w+\}\/files)$/;

const sources = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".js") ? [join(dir, e.name)] : [],
  );

/** `const x = await api("GET", "/v1/<list route>...")` and the names the answer is then read through. */
function legacyReads(text: string): string[] {
  const found: string[] = [];
  const listGet = /(?:const|let)\s+(?:\[([^\]]+)\]|(\w+))\s*=\s*await\s+(?:Promise\.all\(\[)?([^;]*)/g;
  for (const m of text.matchAll(listGet)) {
    const names = (m[1] ?? m[2]).split(",").map((n) => n.trim());
    const calls = [...m[3].matchAll(/api\("GET",\s*[`"]([^`"]+)/g)].map((c) => c[1].split("?")[0]);
    calls.forEach((path, i) => {
      const name = names.length === 1 ? names[0] : names[i];
      if (!name || !LIST_ROUTE.test(path)) return;
      for (const field of LEGACY)
        if (new RegExp(`\\b${name}\\.${field}\\b`).test(text)) found.push(`${name}.${field} (GET ${path})`);
    });
  }
  for (const m of text.matchAll(/allPages\([^)]*,\s*["'](\w+)["']/g)) found.push(`allPages(..., "${m[1]}")`);
  return found;
}

describe("web UI list pages", () => {
  it("are read through data only", () => {
    const files = sources(JS);
    expect(files.length).toBeGreaterThan(5);
    const found = files.flatMap((f) => legacyReads(readFileSync(join(ROOT, f), "utf8")).map((r) => `${f}: ${r}`));
    expect(found).toEqual([]);
  });

  it("catches a page read through an older field", () => {
    expect(
      legacyReads(
        'const page = await api("GET", `/v1/conversations?limit=3`);\nfor (const c of page.conversations) x(c);',
      ),
    ).toEqual(["page.conversations (GET /v1/conversations)"]);
    expect(
      legacyReads(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the input is page source that holds template literals
        'const [page, timeline] = await Promise.all([api("GET", `/v1/conversations/${id}/messages?after=0`), api("GET", `/v1/conversations/${id}/timeline?limit=5`)]);\nuse(page.messages, timeline.cards);',
      ),
    ).toEqual([
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the input is page source that holds template literals
      "page.messages (GET /v1/conversations/${id}/messages)",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the input is page source that holds template literals
      "timeline.cards (GET /v1/conversations/${id}/timeline)",
    ]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the input is page source that holds template literals
    expect(legacyReads('const all = await allPages(`/v1/conversations/${id}/timeline`, "cards");')).toEqual([
      'allPages(..., "cards")',
    ]);
    // The replay is not a list: its `messages` are its own.
    expect(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the input is page source that holds template literals
      legacyReads('const replay = await api("GET", `/v1/conversations/${id}/replay`);\nuse(replay.messages);'),
    ).toEqual([]);
  });
});
