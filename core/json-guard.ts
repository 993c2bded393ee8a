// Checks on a parsed JSON value from an untrusted client, shared by HTTP bodies and websocket
// frames: a depth bound, and well-formed Unicode in every string and key (a lone surrogate cannot
// be encoded as UTF-8, so it would break the record, the index and the model request later).
// Iterative on purpose: the depth is chosen by the attacker.

export const MAX_JSON_DEPTH = 64;

/** The refusal for a value nested past MAX_JSON_DEPTH, the same wherever the rule is applied. */
export const nestedTooDeep = (rootName: string): string => `${rootName}: nested deeper than ${MAX_JSON_DEPTH} levels`;

/** An array or object being walked: its children are visited last to first, each one's subtree before the next. */
interface Walked {
  value: unknown[] | Record<string, unknown>;
  depth: number;
  /** An object's keys; null for an array. */
  keys: string[] | null;
  /** The child being visited (counts down; below 0 when done). */
  at: number;
}

/**
 * Whether `rootName` names a whole document (a body, a socket's frame) rather than a path into one
 * (`messages[1].content.0.input`, an imported message's field): a document's fields are named bare
 * (`title`, not `body.title`), as the schema's errors name them; a path is kept, so the problem
 * says which message and field it is in.
 */
const namesDocument = (rootName: string): boolean => !/[.[]/.test(rootName);

/**
 * Where the value being visited is: the root's name, then each walked container's current child.
 * Built only when a problem is reported, so the walk keeps no string per node and stays linear in
 * the value's size (a frame of millions of elements costs a loop, not a path string each).
 */
function pathOf(frames: Walked[], rootName: string): string {
  let path = rootName;
  frames.forEach(({ keys, at }, i) => {
    if (keys === null) path = `${path}[${at}]`;
    else path = i === 0 && namesDocument(rootName) ? keys[at] : `${path}.${keys[at]}`;
  });
  return path;
}

/** null when the value is acceptable, else a message naming where it is not. */
export function jsonValueProblem(root: unknown, rootName = "body"): string | null {
  // The containers from the root down to the one whose child is being visited: memory bounded by the depth.
  const frames: Walked[] = [];
  const visit = (value: unknown, depth: number): string | null => {
    if (typeof value === "string")
      return value.isWellFormed() ? null : `${pathOf(frames, rootName)}: not well-formed Unicode (a lone surrogate)`;
    // JSON.parse reads 1e400 as Infinity, which JSON.stringify writes as null: never what was given.
    if (typeof value === "number")
      return Number.isFinite(value) ? null : `${pathOf(frames, rootName)}: a number out of range`;
    if (value === null || typeof value !== "object") return null;
    if (depth >= MAX_JSON_DEPTH) return nestedTooDeep(rootName);
    if (Array.isArray(value)) {
      frames.push({ value, depth, keys: null, at: value.length });
      return null;
    }
    const keys = Object.keys(value);
    for (const k of keys)
      if (!k.isWellFormed()) return `${pathOf(frames, rootName)}: a key is not well-formed Unicode (a lone surrogate)`;
    frames.push({ value: value as Record<string, unknown>, depth, keys, at: keys.length });
    return null;
  };
  let problem = visit(root, 0);
  while (problem === null && frames.length) {
    const top = frames[frames.length - 1];
    if (--top.at < 0) {
      frames.pop();
      continue;
    }
    const child =
      top.keys === null ? (top.value as unknown[])[top.at] : (top.value as Record<string, unknown>)[top.keys[top.at]];
    problem = visit(child, top.depth + 1);
  }
  return problem;
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
