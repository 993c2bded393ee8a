import type { DatabaseSync } from "node:sqlite";
export function cortexShardSchema(): string[];
export function migrateShard(db: DatabaseSync): DatabaseSync;
export function d1Over(db: DatabaseSync): Pick<D1Database, "prepare" | "batch" | "withSession">;
