// db/schema.ts (drizzle) against the database every migration in d1-migrations/ builds: each table
// drizzle declares must match the migrated table column by column (name, type, NOT NULL, primary
// key), so queries written with drizzle and the raw SQL beside them see one truth. The test reads
// whatever tables schema.ts exports and whatever migrations exist; new ones need no edit here.
import { env } from "cloudflare:workers";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as schema from "../../db/schema";

interface PragmaColumn {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

const tables: SQLiteTable[] = Object.values(schema as Record<string, unknown>).filter(
  (value): value is SQLiteTable => value instanceof SQLiteTable,
);

describe("db/schema.ts", () => {
  it("declares tables", () => {
    expect(tables.length).toBeGreaterThan(5);
  });

  for (const table of tables) {
    const config = getTableConfig(table);
    it(`${config.name} matches the migrated database`, async () => {
      const { results } = await env.DB.prepare(`PRAGMA table_info(${JSON.stringify(config.name)})`).all<PragmaColumn>();
      expect(results.length, `${config.name} exists after the migrations`).toBeGreaterThan(0);
      const composite = new Set(config.primaryKeys.flatMap((pk) => pk.columns.map((c) => c.name)));
      const declared = config.columns
        .map((c) => {
          const pk = c.primary || composite.has(c.name);
          // SQLite lets a TEXT PRIMARY KEY hold NULL unless stated, drizzle assumes NOT NULL: compare non-key columns only.
          return { name: c.name, type: c.getSQLType().toUpperCase(), notNull: pk ? null : c.notNull, pk };
        })
        .sort((a, b) => a.name.localeCompare(b.name));
      const migrated = results
        .map((c) => ({
          name: c.name,
          type: c.type.toUpperCase(),
          notNull: c.pk > 0 ? null : c.notnull === 1,
          pk: c.pk > 0,
        }))
        .sort((a, b) => a.name.localeCompare(b.name));
      expect(declared).toEqual(migrated);
    });
  }
});
