import type { DatabaseSync } from "node:sqlite";

export interface ShardMeasure {
  file: string;
  bytes: number;
  diskBytes: number;
  tenants: string[];
  docs: number;
  messages: number;
  ftsRows: number;
  byTable: Record<string, number>;
}
export type Snapshot = Map<string, Map<string, string>>;
export type RowChanges = { inserted: number; updated: number; deleted: number };

export function sqliteFiles(persistDir: string, kind: string, match: string): string[];
export function withCopy<T>(file: string, fn: (db: DatabaseSync, bytes: number) => T): T;
export function measureShard(file: string): ShardMeasure;
export function snapshotTables(file: string): Snapshot;
export function diffSnapshots(before: Snapshot, after: Snapshot): Record<string, RowChanges>;
export function stackFiles(persistDir: string): { db: string; layout: string; shards: string[] };
export function tenantsIn(file: string): string[];
