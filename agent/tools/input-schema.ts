// A tool's JSON Schema for the model, derived from the zod schema that validates its calls, so
// the limits the tool enforces (lengths, ranges, patterns, required fields) are the ones the model
// is shown: nothing is written twice, nothing drifts.
import { z } from "zod";

// zod states an int without bounds as ±MAX_SAFE_INTEGER: noise the model would pay tokens for.
const SAFE = Number.MAX_SAFE_INTEGER;

function withoutNoise(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutNoise);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema") continue;
    if ((key === "minimum" || key === "maximum") && Math.abs(value as number) === SAFE) continue;
    out[key] = withoutNoise(value);
  }
  return out;
}

/** The input side (defaults make a field optional), without the `$schema` line or safe-integer bounds. */
export function toolInputSchema(input: z.ZodType): Record<string, unknown> {
  return withoutNoise(z.toJSONSchema(input, { io: "input" })) as Record<string, unknown>;
}
