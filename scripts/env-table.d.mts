// Types of scripts/env-table.mjs for the test that imports it.
export declare const TABLE_START: string;
export declare const TABLE_END: string;
export declare function envTable(
  vars: Record<string, { must: string; default: unknown; meaning: string; secret?: boolean }>,
): string;
export declare function withEnvTable(readme: string, table: string): string;
