export function tsType(schema: unknown, indent?: string): string;
export function typesFromDocument(doc: {
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown> };
}): string;
