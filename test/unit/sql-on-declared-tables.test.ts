// D1 rule: every query on a table db/schema.ts declares goes through drizzle, so the declaration
// is the one description of those tables the code relies on (test/workers/db-schema.test.ts holds
// it to the migrations). Raw SQL is for the tables drizzle does not declare. This scans every
// string and template literal under services/, agent/, durable-objects/ and workers/ for SQL that
// names a declared table, and every generic chunked delete for a declared table's name.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import * as schema from "../../db/schema";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), "../.."));
const SCANNED = ["services", "agent", "durable-objects", "workers"];

const declaredTables = Object.values(schema as Record<string, unknown>)
  .filter((v): v is SQLiteTable => v instanceof SQLiteTable)
  .map((t) => getTableConfig(t).name);

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return name === "public" ? [] : sources(path);
    return /\.(ts|mts)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Each string or template literal of the file (a template's parts joined around its holes). */
function literals(path: string, text: string): { line: number; text: string }[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    let value: string | null = null;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) value = node.text;
    else if (ts.isTemplateExpression(node))
      value = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(" ? ");
    if (value !== null) found.push({ line: file.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: value });
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function rawSqlOnDeclaredTables(files: { path: string; text: string }[], tables: string[]): string[] {
  const names = tables.join("|");
  const statement = new RegExp(`\\b(from|into|update|join|table)\\s+["\`]?(${names})\\b`, "i");
  const chunkedDelete = new RegExp(`deleteRowsInChunks\\([^,]+,\\s*\\{\\s*table:\\s*["'\`](${names})["'\`]`);
  const found: string[] = [];
  for (const { path, text } of files) {
    for (const lit of literals(path, text)) {
      const m = statement.exec(lit.text);
      if (m) found.push(`${path}:${lit.line}: raw SQL on ${m[2]}`);
    }
    for (const m of text.matchAll(new RegExp(chunkedDelete, "g"))) found.push(`${path}: deleteRowsInChunks on ${m[1]}`);
  }
  return found;
}

describe("SQL on the tables db/schema.ts declares", () => {
  it("reads the declared tables from db/schema.ts", () => {
    expect(declaredTables).toEqual(
      expect.arrayContaining(["tenants", "api_keys", "conversations", "attachments", "projects"]),
    );
  });

  it("is written with drizzle everywhere; raw SQL names only undeclared tables", () => {
    const files = SCANNED.flatMap((dir) => sources(dir)).map((path) => ({
      path,
      text: readFileSync(join(ROOT, path), "utf8"),
    }));
    expect(files.length).toBeGreaterThan(50);
    expect(rawSqlOnDeclaredTables(files, declaredTables)).toEqual([]);
  });

  it("catches raw statements, sql`` fragments and chunked deletes on a declared table, and nothing else", () => {
    const text = [
      "db.prepare(`UPDATE projects SET updated_at = ? WHERE id = ?`);",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a fixture line of TypeScript source, its template literal meant literally
      "db.run(sql`DELETE FROM memory_episodes WHERE tenant_id = ${t}`);",
      "db.prepare('select id from conversations where tenant_id = ?');",
      'await deleteRowsInChunks(env.DB, { table: "attachments", where: "tenant_id = ?", params: [t] });',
      "db.prepare(`DELETE FROM cortex_docs WHERE tenant_id = ?`);",
      'await deleteRowsInChunks(env.DB, { table: "cortex_docs", where: "tenant_id = ?", params: [t] });',
      "// a comment: SELECT * FROM projects",
      'const message = "the conversations of the project";',
      "drizzle(db).delete(projects).where(eq(projects.id, id));",
    ].join("\n");
    expect(rawSqlOnDeclaredTables([{ path: "services/x.ts", text }], declaredTables)).toEqual([
      "services/x.ts:1: raw SQL on projects",
      "services/x.ts:2: raw SQL on memory_episodes",
      "services/x.ts:3: raw SQL on conversations",
      "services/x.ts: deleteRowsInChunks on attachments",
    ]);
  });
});
