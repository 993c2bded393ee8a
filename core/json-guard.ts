// Checks on a parsed JSON value from an untrusted client, shared by HTTP bodies and websocket
// frames: a depth bound, and well-formed Unicode in every string and key (a lone surrogate cannot
// be encoded as UTF-8, so it would break the record, the index and the model request later).
// Iterative on purpose: the depth is chosen by the attacker.

export const MAX_JSON_DEPTH = 64;

/** The refusal for a value nested past MAX_JSON_DEPTH, the same wherever the rule is applied. */
export const nestedTooDeep = (rootName: string): string => `${rootName}: nested deeper than ${MAX_JSON_DEPTH} levels`;

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
    if (depth >= MAX_JSON_DEPTH) return nestedTooDeep(rootName);
    if (Array.isArray(value))
      value.forEach((v, i) => stack.push({ value: v, depth: depth + 1, path: `${path}[${i}]` }));
    else
      for (const [k, v] of Object.entries(value)) {
        if (!k.isWellFormed()) return `${path}: a key is not well-formed Unicode (a lone surrogate)`;
        stack.push({ value: v, depth: depth + 1, path: path === rootName ? k : `${path}.${k}` });
      }
  }
  return null;
}

/**
 * Whether JSON text nests arrays and objects deeper than `limit` (MAX_JSON_DEPTH: the rule
 * jsonValueProblem applies to the parsed value), read without parsing it: parsing deep nesting is what costs, so text
 * of untrusted depth is measured first. Brackets inside strings do not count.
 */
export function jsonTextTooDeep(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
