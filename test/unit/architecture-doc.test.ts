// The docs say only what the tree holds. Every repo path ARCHITECTURE.md, README.md and docs/*.md
// name exists, none points outside the repository, and every figure ARCHITECTURE.md states about
// the code sits in a table marked `<!-- checked: NAME -->` that this test recomputes from the tree.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { toolRegistry } from "../../agent/tools";
import { LAYERS } from "./layer-map";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), "../.."));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** Folders never walked for the tree's files: installed, built or run-time output. */
const SKIP_DIRS = new Set([".git", "node_modules", "dist", ".wrangler", "test-artifacts", "bench-results"]);
/**
 * Paths the docs name that are not files of the repository: R2 keys (r2-layout/README.md), what
 * the benchmarks and browser tests write, local state and build output, files a person creates.
 */
const NOT_REPO_FILES = [
  /^tenants\//,
  /^conversations\//,
  /^brain\//,
  /^attachments\//,
  /^imports\//,
  /^exports\//,
  /^messages\//,
  /^prefrontal\//,
  /^(head|line-index|job|export)\.json$/,
  /^export\.jsonl$/,
  /^blob$/,
  /^\{/,
  /^bench-results\//,
  /^test-artifacts\//,
  /^\.wrangler\//,
  /^dist\//,
  /^node_modules\//,
  /^\.dev\.vars$/,
];
/** A code span is taken for a path when it is one: no spaces, no call syntax, a folder or a file extension. */
const PATH_LIKE = /^\.{0,2}\/?[\w@.*{}-]+(?:\/[\w@.*{}:-]+)*\/?$/;
const FILE_EXT = /\.(ts|mts|mjs|js|json|jsonl|toml|md|sql|txt|css|html|sh|bcmap)$/;

function walk(dir = ""): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    if (SKIP_DIRS.has(name)) return [];
    const path = dir ? `${dir}/${name}` : name;
    return statSync(join(ROOT, path)).isDirectory() ? [`${path}/`, ...walk(path)] : [path];
  });
}

type Tree = {
  has(path: string): boolean;
  module(path: string): boolean;
  matches(glob: string): boolean;
  endsWith(tail: string): number;
  basenames: Set<string>;
};

const SOURCE_EXTS = [".ts", ".mjs", ".js"];

function treeOf(paths: string[]): Tree {
  const all = new Set(paths.map((p) => p.replace(/\/$/, "")));
  const basenames = new Set([...all].map((p) => p.split("/").pop()!));
  const has = (path: string) => all.has(path.replace(/\/$/, ""));
  const isModule = (path: string) => SOURCE_EXTS.some((ext) => all.has(path + ext));
  return {
    has,
    module: (path) => isModule(path) || (/\.\w+$/.test(path) && isModule(path.replace(/\.\w+$/, ""))),
    matches: (glob) => {
      const re = new RegExp(
        `^${glob
          .replace(/\/$/, "")
          .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
          .replace(/\*/g, "[^/]*")}$`,
      );
      // A pattern with no folder, `*.gen.ts`, is a file name anywhere.
      return [...all].some((p) => re.test(glob.includes("/") ? p : p.split("/").pop()!));
    },
    endsWith: (tail) => [...all].filter((p) => p.endsWith(`/${tail.replace(/\/$/, "")}`)).length,
    basenames,
  };
}

/** The doc's text outside fenced code blocks. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/**
 * The anchors a Markdown file's headings get, as GitHub makes them: the heading's text lowercased,
 * its punctuation dropped (hyphens and underscores kept), spaces made hyphens; a repeat gets `-1`, `-2`.
 */
function headingSlugs(text: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of prose(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const words = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = words
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n ? `${base}-${n}` : base);
  }
  return slugs;
}

/**
 * Problems with the paths a doc (at `docPath`, relative to the repo) names. `strict`: every path
 * is written from the repo's root; otherwise a path may also be the unique tail of one (as a
 * folder's README names its own files).
 */
function pathProblems(docPath: string, text: string, tree: Tree, strict: boolean): string[] {
  const problems: string[] = [];
  const docDir = dirname(docPath) === "." ? "" : dirname(docPath);
  const inside = (target: string) => {
    const resolved = normalize(join(ROOT, docDir, target));
    return resolved === ROOT || resolved.startsWith(ROOT + sep) ? relative(ROOT, resolved).split(sep).join("/") : null;
  };
  // Anything climbing out of the repository, fenced code included; a climb that stays inside names a file.
  for (const m of text.matchAll(/(?:^|[\s(`'"=[])((?:\.\.\/)+[\w.@/-]*)/gm)) {
    const path = inside(m[1]);
    if (path === null) problems.push(`${docPath}: ${m[1]} is outside the repository`);
    else if (path !== "" && !tree.has(path)) problems.push(`${docPath}: ${m[1]} names no file`);
  }
  const body = prose(text);
  // Markdown links to files, and to a heading of a Markdown file (its own, for `#heading`).
  for (const m of body.matchAll(/\]\(([^)\s]+)\)/g)) {
    const [target, anchor] = m[1].split("#");
    if (/^[a-z]+:/i.test(target)) continue;
    const path = target ? inside(target) : docPath;
    if (path === null || path === "") continue;
    if (!tree.has(path)) problems.push(`${docPath}: link ${m[1]} names no file`);
    else if (anchor && path.endsWith(".md") && !headingSlugs(read(path)).has(decodeURIComponent(anchor)))
      problems.push(`${docPath}: link ${m[1]} names no heading of ${path}`);
  }
  // Code spans that are paths.
  for (const m of body.matchAll(/`([^`\n]+)`/g)) {
    const token = m[1].trim();
    if (!PATH_LIKE.test(token) || (/^[/@.]/.test(token) && !token.startsWith("./"))) continue;
    const path = token.replace(/^\.\//, "").replace(/\/\*$/, "/");
    const isFile = FILE_EXT.test(path);
    // Not a path: a word, a MIME type or an address range (no extension, and no top-level folder of the repo first).
    if (!isFile && (!path.includes("/") || !tree.has(path.split("/")[0]))) continue;
    if (NOT_REPO_FILES.some((re) => re.test(path))) continue;
    if (path.includes("*")) {
      if (!tree.matches(path)) problems.push(`${docPath}: \`${token}\` matches no file`);
      continue;
    }
    // `core/replay`, `core/fold.chooseFoldMark`: a module, or a module's export.
    if (tree.has(path) || (!isFile && tree.module(path))) continue;
    if (!path.includes("/")) {
      if (!tree.basenames.has(path)) problems.push(`${docPath}: \`${token}\` is no file of the repository`);
      continue;
    }
    if (!strict && tree.endsWith(path) === 1) continue;
    problems.push(
      `${docPath}: \`${token}\` does not exist${strict ? " (paths are written from the repository's root)" : ""}`,
    );
  }
  // A file outside the repository named without a path (the contract lives outside it).
  for (const m of body.matchAll(/(?<![\w/.-])API\.md\b/g))
    problems.push(`${docPath}: ${m[0]} is outside the repository`);
  return problems;
}

/** The rows of the table right after `<!-- checked: name -->`: each row's cells, header and rule left out. */
function checkedTable(text: string, name: string): string[][] | undefined {
  const at = text.indexOf(`<!-- checked: ${name} -->`);
  if (at < 0) return undefined;
  const lines = text.slice(at).split("\n").slice(1);
  const start = lines.findIndex((l) => l.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split("|")
        .map((c) => c.trim()),
    );
  }
  return rows.slice(2);
}

const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
const sorted = (xs: Iterable<string>) => [...xs].sort();

function tomlValues(path: string, key: string): string[] {
  return [...read(path).matchAll(new RegExp(`^${key} = "([^"]+)"`, "gm"))].map((m) => m[1]);
}

/** Every queue either worker produces to, consumes or names as a dead-letter queue. */
const queueNames = () => [
  ...new Set(
    ["wrangler.toml", "workers/summarizer/wrangler.toml"].flatMap((path) => [
      ...tomlValues(path, "queue"),
      ...tomlValues(path, "dead_letter_queue"),
    ]),
  ),
];

/** Tables a migration leaves: created, less those dropped, renames followed. */
function d1Tables(sql: string[]): string[] {
  const tables = new Set<string>();
  for (const text of sql) {
    for (const m of text.matchAll(
      /\b(create (?:virtual )?table(?: if not exists)?|drop table(?: if exists)?|alter table)\s+(\w+)(?:\s+rename to\s+(\w+))?/gi,
    )) {
      const verb = m[1].toLowerCase();
      if (verb.startsWith("create")) tables.add(m[2]);
      else if (verb.startsWith("drop")) tables.delete(m[2]);
      else if (m[3]) tables.delete(m[2]), tables.add(m[3]);
    }
  }
  return sorted(tables);
}

const migrations = () => readdirSync(join(ROOT, "d1-migrations")).filter((n) => n.endsWith(".sql"));
const conversationParts = () =>
  readdirSync(join(ROOT, "durable-objects/conversation")).filter((n) => n.endsWith(".ts"));
const lineCount = (path: string) => read(path).split("\n").length;
const openapiOperations = () => {
  const doc = JSON.parse(read("client/openapi.gen.json")) as { paths: Record<string, Record<string, unknown>> };
  return Object.values(doc.paths).flatMap((ops) =>
    Object.keys(ops).filter((m) => ["get", "post", "put", "patch", "delete"].includes(m)),
  );
};

/** Each figure ARCHITECTURE.md may state, recomputed. "at most" figures are limits the tree must keep. */
const FIGURES: Record<string, { value: () => number; atMost?: boolean }> = {
  layers: { value: () => LAYERS.length },
  "Durable Object classes": { value: () => new Set(tomlValues("wrangler.toml", "class_name")).size },
  queues: { value: () => queueNames().length },
  "D1 migrations": { value: () => migrations().length },
  "D1 tables": { value: () => d1Tables(migrations().map((n) => read(`d1-migrations/${n}`))).length },
  "HTTP operations in client/openapi.gen.json": { value: () => openapiOperations().length },
  "built-in tools": { value: () => toolRegistry.names().length },
  "core tools (schemas on every request)": { value: () => toolRegistry.all().filter((t) => t.core).length },
  "files in durable-objects/conversation/": { value: () => conversationParts().length },
  "lines of durable-objects/conversation/conversation-do.ts, at most": {
    value: () => lineCount("durable-objects/conversation/conversation-do.ts"),
    atMost: true,
  },
  "lines of any other file in durable-objects/conversation/, at most": {
    value: () =>
      Math.max(
        ...conversationParts()
          .filter((n) => n !== "conversation-do.ts")
          .map((n) => lineCount(`durable-objects/conversation/${n}`)),
      ),
    atMost: true,
  },
};

/** Lists ARCHITECTURE.md names in full, each the first column's code spans of its marked table. */
const LISTS: Record<string, () => string[]> = {
  layers: () => LAYERS.flat().slice(),
  "conversation-parts": () => conversationParts(),
  "d1-tables": () => d1Tables(migrations().map((n) => read(`d1-migrations/${n}`))),
  "durable-objects": () => [...new Set(tomlValues("wrangler.toml", "class_name"))],
  queues: () => queueNames(),
  "core-tools": () =>
    toolRegistry
      .all()
      .filter((t) => t.core)
      .map((t) => t.name),
};

function figureProblems(rows: string[][], compute: typeof FIGURES): string[] {
  const problems: string[] = [];
  for (const [name, stated] of rows) {
    const figure = compute[name];
    if (!figure) {
      problems.push(`figure "${name}" is not one the test can check`);
      continue;
    }
    const claimed = Number(stated.replace(/,/g, ""));
    const actual = figure.value();
    if (!Number.isFinite(claimed)) problems.push(`figure "${name}": "${stated}" is not a number`);
    else if (figure.atMost ? actual > claimed : actual !== claimed)
      problems.push(
        `figure "${name}": the doc says ${figure.atMost ? "at most " : ""}${claimed}, the tree has ${actual}`,
      );
  }
  return problems;
}

const docs = [
  "ARCHITECTURE.md",
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((n) => n.endsWith(".md"))
    .map((n) => `docs/${n}`),
];
const tree = treeOf(walk());
const architecture = read("ARCHITECTURE.md");

describe("ARCHITECTURE.md, README.md and docs/ stay true", () => {
  it.each(docs)("%s names only paths that exist, none outside the repository", (doc) => {
    expect(pathProblems(doc, read(doc), tree, doc === "ARCHITECTURE.md")).toEqual([]);
  });

  it("ARCHITECTURE.md's figures match the tree", () => {
    const rows = checkedTable(architecture, "figures");
    expect(rows?.length).toBeGreaterThan(5);
    expect(figureProblems(rows!, FIGURES)).toEqual([]);
  });

  it.each(Object.keys(LISTS))("ARCHITECTURE.md's %s table names exactly what the tree has", (name) => {
    const rows = checkedTable(architecture, name);
    expect(rows, `no table marked <!-- checked: ${name} -->`).toBeDefined();
    const listed = rows!.flatMap((row) => names(row[0]).map((n) => n.replace(/\/$/, "").split("/").pop()!));
    expect(sorted(listed)).toEqual(sorted(LISTS[name]()));
  });

  it("docs/measurements.md gives every figure its command and when it was measured", () => {
    const sections = read("docs/measurements.md").split(/^## /m).slice(1);
    expect(sections.length).toBeGreaterThan(5);
    const bare = sections.filter(
      (s) => !/^- \*\*Command\*\*: .*`[^`]+`/m.test(s) || !/^- \*\*Measured\*\*: .*\d{4}-\d{2}-\d{2}/m.test(s),
    );
    expect(bare.map((s) => s.split("\n")[0])).toEqual([]);
  });

  it("catches a missing path, a path outside the repository, a wrong figure and an unknown one", () => {
    const small = treeOf([
      "core/",
      "core/replay.ts",
      "durable-objects/",
      "durable-objects/conversation/",
      "durable-objects/conversation/record.ts",
      "docs/",
      "docs/api-notes.md",
    ]);
    const text = [
      "See `core/replay.ts`, `core/nothing.ts`, `conversation/record.ts`, `tenants/{id}/head.json` and [notes](docs/api-notes.md).",
      "The contract is API.md; see [the contract](../shared/API.md) and [gone](docs/gone.md).",
      "```sh\n../shared/checks/run.sh\n```",
    ].join("\n");
    expect(pathProblems("ARCHITECTURE.md", text, small, true)).toEqual([
      "ARCHITECTURE.md: ../shared/API.md is outside the repository",
      "ARCHITECTURE.md: ../shared/checks/run.sh is outside the repository",
      "ARCHITECTURE.md: link docs/gone.md names no file",
      "ARCHITECTURE.md: `core/nothing.ts` does not exist (paths are written from the repository's root)",
      "ARCHITECTURE.md: `conversation/record.ts` does not exist (paths are written from the repository's root)",
      "ARCHITECTURE.md: API.md is outside the repository",
    ]);
    expect(pathProblems("README.md", "`conversation/record.ts`", small, false)).toEqual([]);
    const rows = checkedTable(
      "<!-- checked: figures -->\n| figure | value |\n|---|---|\n| layers | 9 |\n| rooms | 3 |\n| limit | 10 |\n",
      "figures",
    )!;
    expect(figureProblems(rows, { layers: { value: () => 5 }, limit: { value: () => 11, atMost: true } })).toEqual([
      'figure "layers": the doc says 9, the tree has 5',
      'figure "rooms" is not one the test can check',
      'figure "limit": the doc says at most 10, the tree has 11',
    ]);
    expect(
      d1Tables([
        "CREATE TABLE a (x);\nCREATE VIRTUAL TABLE f USING fts5(x);",
        "ALTER TABLE a RENAME TO b;\nDROP TABLE IF EXISTS f;",
      ]),
    ).toEqual(["b"]);
  });
});
