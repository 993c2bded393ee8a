import type { DatabaseSync } from "node:sqlite";
export function cortexShardSchema(): string[];
export function migrateShard(db: DatabaseSync): DatabaseSync;
export function d1Over(db: DatabaseSync): Pick<D1Database, "prepare" | "batch" | "withSession">;
export function insertTenantMessages(
  db: DatabaseSync,
  opts: { tenant: string; n: number; seed: number },
): ReturnType<typeof import("./scale-text.mjs").tenantText>;
