// The JSON Schema shapes tool-schema.ts and tool-schema-union.ts both speak (types only, so neither imports the other for them).

export type JsonSchema = Record<string, unknown>;

export interface ModelToolSchema {
  schema: JsonSchema;
  /** A line for the tool's description when the rewrite lost a rule the model should still know; null otherwise. */
  note: string | null;
}
