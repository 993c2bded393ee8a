// Checks on a parsed JSON value from an untrusted client, shared by HTTP bodies and websocket
// frames: a depth bound, and well-formed Unicode in every string and key (a lone surrogate cannot
// be encoded as UTF-8, so it would break the record, the index and the model request later).
// Iterative on purpose: the depth is chosen by the attacker.

export const MAX_JSON_DEPTH = 64;

/** null when the value is acceptable, else a message naming where it is not. */
export function jsonValueProblem(root: unknown, rootName = "body"): string | null {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: root, depth: 0, path: rootName }];
  while (stack.length) {
    const { value, depth, path } = stack.pop()!;
    if (typeof value === "string") {
      if (!value.isWellFormed()) return `${path}: not well-formed Unicode (a lone surrogate)`;
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) return `${rootName}: nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (Array.isArray(value)) value.forEach((v, i) => stack.push({ value: v, depth: depth + 1, path: `${path}[${i}]` }));
    else
      for (const [k, v] of Object.entries(value)) {
        if (!k.isWellFormed()) return `${path}: a key is not well-formed Unicode (a lone surrogate)`;
        stack.push({ value: v, depth: depth + 1, path: path === rootName ? k : `${path}.${k}` });
      }
  }
  return null;
}
