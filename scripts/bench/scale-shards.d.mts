import type { ShardMeasure } from "./scale-files.mjs";

export const SHARD_CAP_BYTES: number;
export const BUCKETS: { name: string; lo: number; hi: number }[];
export function bucketOf(messages: number): string;
export function summarizeShards(shards: ShardMeasure[]): {
  shards: number;
  sharedShards: number;
  messages: number;
  bytes: number;
  diskBytes: number;
  docsPerMessage: number;
  ftsRowsPerMessage: number;
  bytesPerMessage: number;
  marginalBytesPerMessage: number;
  shardFloorBytes: number;
  messagesAtCap: number;
  tableBytesPerMessage: Record<string, number>;
  buckets: { name: string; shards: number; messages: number; bytesPerMessage: number }[];
  largest: number;
  smallest: number;
};
