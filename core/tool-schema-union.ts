// A top-level oneOf / anyOf / allOf flattened into one object schema, for tools whose schema is
// published elsewhere (an MCP server's) and that the Messages API would otherwise refuse on every
// request. The flat schema keeps every argument the tool takes; the rule it can no longer state
// (which combinations go together) goes to the description, where the model reads it.
//
// - properties: every branch's (and the schema's own). A property in several branches keeps the
//   one schema when they agree, an enum when each branch pins it to a constant (a discriminator),
//   and otherwise anyOf (oneOf/anyOf) or allOf (allOf) of the differing schemas: unions are only
//   refused at the top level.
// - required: the schema's own, plus what every alternative requires (oneOf/anyOf), or what any
//   branch requires (allOf, where every branch applies).
// - a branch that is a local $ref ("#/$defs/X", "#/definitions/X") is read through it.
// - every local $ref keeps meaning what it meant: the root's $defs / definitions stay (those still
//   referred to), and a ref whose target the rewrite moved or dropped (into a branch: "#/anyOf/0/
//   $defs/X", "#/oneOf/1/properties/y"; or "#", the union itself) gets a copy of that target in
//   $defs, named after it ("X", "oneOf_1_properties_y", "root"; "_2", "_3"... on a clash with a
//   definition already there), and points there. A ref that resolved nowhere before stays as it is.
// - the walk is bounded: unions nested through $refs repeat their branches at every level (a 1.9 KB
//   schema of four levels of 20 refs is 168,000 paths), so a definition reached again at the same
//   depth is flattened once and reused, and a union's branches count towards MAX_BRANCHES only the
//   first time the walk reaches it: a target many branches share costs its branches once, as it is
//   declared once. Past MAX_BRANCHES the tool is offered without arguments rather than flattened in
//   part, and the note says why. The note's lines are each said once; the schema's own
//   combinations come first and always whole (the model needs every branch's arguments, and an MCP
//   tool's 16 KiB cap on the schema as sent, note included, bounds them), and the nested lines stop
//   at NOTE_MAX_CHARS: they ride every request once the tool is active.
import type { JsonSchema, ModelToolSchema } from "./json-schema";

const UNIONS = ["oneOf", "anyOf", "allOf"] as const;
type Union = (typeof UNIONS)[number];
/** How deep nested unions and $refs are followed: a cycle or a pathological schema stops here. */
const MAX_DEPTH = 4;
/**
 * How many union branches one schema's flattening may visit, every level together: a real one
 * visits tens; a schema past this would give a note of thousands of lines and cost seconds on
 * every turn that lists the tool.
 */
export const MAX_BRANCHES = 1_000;
/**
 * The longest note (the combinations told in the description): the nested unions' lines past it are
 * counted, not shown. The schema's own lines are always shown whole, even past it.
 */
export const NOTE_MAX_CHARS = 2_000;

const isObj = (v: unknown): v is JsonSchema => !!v && typeof v === "object" && !Array.isArray(v);
const stable = (v: unknown): string => JSON.stringify(v);

/** A schema flattened. Shared once made (a walk reuses it): read it, never change it. */
interface Flat {
  properties: Map<string, JsonSchema[]>;
  required: Set<string>;
  /** Each line once: the schema's own first (`own` of them), then its branches'. */
  notes: string[];
  own: number;
}

/**
 * One flattening's walk: the root's definitions, how many more branches it may visit, the unions
 * whose branches it has counted, and each schema already flattened, by depth (a deeper visit reads
 * fewer levels, so it may differ).
 */
interface Walk {
  defs: JsonSchema;
  branchesLeft: number;
  counted: Set<JsonSchema>;
  done: Map<JsonSchema, Map<number, Flat>>;
}

export function flattenUnion(schema: JsonSchema): ModelToolSchema {
  const defs = {
    ...(isObj(schema.definitions) ? schema.definitions : {}),
    ...(isObj(schema.$defs) ? schema.$defs : {}),
  };
  const walk: Walk = { defs, branchesLeft: MAX_BRANCHES, counted: new Set(), done: new Map() };
  const flat = flatten(schema, walk, 0);
  // Not flattened in part: a branch left out would take its arguments with it (and an
  // "additionalProperties": false kept from the root would then refuse them).
  if (walk.branchesLeft < 0)
    return {
      schema: { type: "object", properties: {} },
      note: `Its input schema's unions have more than ${MAX_BRANCHES} branches in all (counted through their $refs), too many to flatten, so it is offered without arguments.`,
    };
  // Built from entries, not by assignment: an argument named `__proto__` stays a property.
  const properties: JsonSchema = Object.fromEntries(
    [...flat.properties].map(([name, variants]) => [name, merged(variants, "anyOf")]),
  );
  const { oneOf: _o, anyOf: _a, allOf: _l, properties: _p, required: _r, ...rest } = schema;
  const out: JsonSchema = { ...rest, type: "object", properties };
  if (flat.required.size) out.required = [...flat.required];
  return { schema: withoutUnusedDefs(withRefsKept(out, schema)), note: cappedNote(flat) };
}

/**
 * The note: the schema's own lines whole (cut, a combination the model needs would go unsaid), then
 * its nested unions' lines while the note stays within NOTE_MAX_CHARS; those past it are counted at
 * the end.
 */
function cappedNote({ notes, own }: Flat): string | null {
  if (!notes.length) return null;
  let note = notes.slice(0, own).join("\n");
  let shown = own;
  for (const line of notes.slice(own)) {
    const next = shown ? `${note}\n${line}` : line;
    if (next.length > NOTE_MAX_CHARS) break;
    note = next;
    shown++;
  }
  const left = notes.length - shown;
  return left ? `${note}\n… and ${left} more ${left === 1 ? "line" : "lines"} on nested unions, left out.` : note;
}

/** Keywords whose values are data, not schemas: a "$ref" in them is no reference. */
const DATA = new Set(["const", "enum", "default", "examples"]);
/** Keywords whose values map names to schemas: a key there ("default", "enum"...) is a name, not a keyword. */
const NAMED = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"]);

/** What a value is: a schema (or a list of them), a map of names to schemas, or data. */
type Kind = "schema" | "names" | "data";
const kindOf = (keyword: string): Kind => (DATA.has(keyword) ? "data" : NAMED.has(keyword) ? "names" : "schema");

/** What the value `tokens` point at from the root schema is ("#/properties/default" a schema, "#/$defs" names). */
function kindAt(tokens: string[]): Kind {
  let kind: Kind = "schema";
  for (const t of tokens) kind = kind === "names" ? "schema" : kind === "schema" ? kindOf(t) : kind;
  return kind;
}

/** Every object holding a string $ref in `node` (a value of that `kind`), at any depth (data left out). */
function refNodes(node: unknown, kind: Kind = "schema"): JsonSchema[] {
  if (kind === "data") return [];
  if (Array.isArray(node)) return node.flatMap((v) => refNodes(v, kind));
  if (!isObj(node)) return [];
  if (kind === "names") return Object.values(node).flatMap((v) => refNodes(v, "schema"));
  const inner = Object.entries(node).flatMap(([k, v]) => refNodes(v, kindOf(k)));
  return typeof node.$ref === "string" ? [node, ...inner] : inner;
}

/** A local ref's JSON pointer, unescaped ("#/$defs/a~1b" → ["$defs", "a/b"]); null for any other ref. */
function pointer(ref: string): string[] | null {
  if (ref === "#") return [];
  if (!ref.startsWith("#/")) return null;
  try {
    return ref
      .slice(2)
      .split("/")
      .map((t) => decodeURIComponent(t).replaceAll("~1", "/").replaceAll("~0", "~"));
  } catch {
    return null;
  }
}

/** What `tokens` point at in `doc`, or undefined. */
function at(doc: unknown, tokens: string[]): unknown {
  let node = doc;
  for (const t of tokens) {
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(t)) node = node[Number(t)];
    else if (isObj(node) && Object.hasOwn(node, t)) node = node[t];
    else return undefined;
  }
  return node;
}

/**
 * `flat` (a copy) with every local $ref that meant something else in `original` pointing at a copy
 * of what it meant, in $defs (see the top of this file). Refs inside a copied target are followed
 * the same way; each target is copied once.
 */
function withRefsKept(flat: JsonSchema, original: JsonSchema): JsonSchema {
  const out = structuredClone(flat);
  const defs: JsonSchema = isObj(out.$defs) ? out.$defs : {};
  const copied = new Map<string, string>();
  const pending: { node: unknown; kind: Kind }[] = [{ node: out, kind: "schema" }];
  for (let i = 0; i < pending.length; i++) {
    for (const node of refNodes(pending[i].node, pending[i].kind)) {
      const tokens = pointer(node.$ref as string);
      const meant = tokens && at(original, tokens);
      // Compared with the flat schema as built: the refs rewritten meanwhile still mean the same.
      if (!tokens || meant === undefined || stable(at(flat, tokens)) === stable(meant)) continue;
      const key = stable(tokens);
      let name = copied.get(key);
      if (name === undefined) {
        const last = tokens.length >= 2 && ["$defs", "definitions"].includes(tokens[tokens.length - 2]);
        const base = (last ? tokens[tokens.length - 1] : tokens.join("_") || "root").replace(/[^A-Za-z0-9_.-]/g, "_");
        name = base;
        for (let n = 2; Object.hasOwn(defs, name); n++) name = `${base}_${n}`;
        copied.set(key, name);
        const target = structuredClone(meant);
        // The whole schema ("#"): its definitions are the root's already.
        if (!tokens.length && isObj(target)) {
          delete target.$defs;
          delete target.definitions;
        }
        // Defined, not assigned: a definition named `__proto__` stays a definition (`defs[name] = …`
        // would set the prototype, and the ref would point nowhere).
        Object.defineProperty(defs, name, { value: target, enumerable: true, writable: true, configurable: true });
        pending.push({ node: target, kind: kindAt(tokens) });
      }
      node.$ref = `#/$defs/${name}`;
    }
  }
  if (copied.size) out.$defs = defs;
  return out;
}

/** The branches' own definitions are inlined now: a definition nothing refers to any more only costs tokens. */
function withoutUnusedDefs(s: JsonSchema): JsonSchema {
  const { $defs: _d, definitions: _n, ...body } = s;
  const used = { $defs: new Set<string>(), definitions: new Set<string>() };
  let frontier: unknown[] = [body];
  while (frontier.length) {
    const next: unknown[] = [];
    // Definitions (and the body) are schemas.
    for (const node of frontier.flatMap((n) => refNodes(n))) {
      const tokens = pointer(node.$ref as string);
      const key = tokens?.[0];
      if (!tokens || (key !== "$defs" && key !== "definitions") || !isObj(s[key])) continue;
      const defs = s[key];
      // "#/$defs" itself refers to every definition; "#/$defs/X/properties/y" to X.
      for (const n of tokens.length === 1 ? Object.keys(defs) : [tokens[1]])
        if (Object.hasOwn(defs, n) && !used[key].has(n)) {
          used[key].add(n);
          next.push(defs[n]);
        }
    }
    frontier = next;
  }
  const out = { ...s };
  for (const key of ["$defs", "definitions"] as const) {
    if (!isObj(s[key])) continue;
    const defs = s[key];
    const kept = Object.fromEntries(Object.entries(defs).filter(([n]) => used[key].has(n)));
    if (Object.keys(kept).length) out[key] = kept;
    else delete out[key];
  }
  return out;
}

/** A local $ref read through (bounded), or the schema itself. */
function resolve(s: unknown, defs: JsonSchema, depth: number): JsonSchema | null {
  let node = s;
  for (let i = 0; i <= MAX_DEPTH && isObj(node) && typeof node.$ref === "string"; i++) {
    const m = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(node.$ref);
    // Own definitions only: "#/$defs/__proto__" with no such definition is dangling, not Object.prototype.
    if (!m || !Object.hasOwn(defs, m[1]) || !isObj(defs[m[1]])) return null;
    node = defs[m[1]];
  }
  return isObj(node) && depth <= MAX_DEPTH ? node : null;
}

/** `s` flattened at `depth`: once per walk (a target many refs share is read once), then reused. */
function flatten(s: JsonSchema, walk: Walk, depth: number): Flat {
  const seen = walk.done.get(s)?.get(depth);
  if (seen) return seen;
  const flat = flattenOnce(s, walk, depth);
  if (walk.branchesLeft >= 0) walk.done.set(s, (walk.done.get(s) ?? new Map()).set(depth, flat));
  return flat;
}

function flattenOnce(s: JsonSchema, walk: Walk, depth: number): Flat {
  const flat: Flat = { properties: new Map(), required: new Set(), notes: [], own: 0 };
  const own = isObj(s.properties) ? s.properties : {};
  for (const [name, p] of Object.entries(own)) if (isObj(p)) flat.properties.set(name, [p]);
  for (const r of Array.isArray(s.required) ? s.required : []) if (typeof r === "string") flat.required.add(r);
  // The branches' own lines, after the schema's: the note is cut at its end. A set: a part reused
  // by many branches tells its lines once, so they do not pile up level after level.
  const nested = new Set<string>();
  // Counted once per union (the first visit), before they are read: past the budget nothing more
  // is walked (flattenUnion gives up).
  if (!walk.counted.has(s)) {
    walk.counted.add(s);
    for (const kind of UNIONS) if (Array.isArray(s[kind])) walk.branchesLeft -= (s[kind] as unknown[]).length;
    if (walk.branchesLeft < 0) return flat;
  }
  for (const kind of UNIONS) {
    if (!Array.isArray(s[kind])) continue;
    const branches = (s[kind] as unknown[])
      .map((b) => resolve(b, walk.defs, depth))
      .filter((b): b is JsonSchema => !!b && (b.type === undefined || b.type === "object"));
    if (!branches.length) continue;
    const parts: Flat[] = [];
    for (const b of branches) {
      parts.push(flatten(b, walk, depth + 1));
      if (walk.branchesLeft < 0) return flat;
    }
    if (kind !== "allOf" && parts.length > 1) flat.notes.push(combinationsLine(kind, branches, parts));
    for (const part of parts) {
      for (const [name, variants] of part.properties) {
        // The schema's own declaration of a property always applies: it stays as it is.
        if (Object.hasOwn(own, name)) continue;
        const have = flat.properties.get(name) ?? [];
        // New lists, never the part's (it may be reused). A variant a reused part brings again is
        // the same object: kept once, or the lists would multiply at every level.
        const all = [...new Set([...have, ...variants])];
        // allOf: every branch's constraint holds, kept as one allOf now (anyOf is the default at the end).
        flat.properties.set(name, kind === "allOf" ? [merged(all, "allOf")] : all);
      }
      for (const line of part.notes) nested.add(line);
    }
    if (kind === "allOf") for (const part of parts) part.required.forEach((r) => flat.required.add(r));
    else for (const r of parts[0].required) if (parts.every((p) => p.required.has(r))) flat.required.add(r);
  }
  const ownLines = [...new Set(flat.notes)];
  flat.notes = [...new Set([...ownLines, ...nested])];
  flat.own = ownLines.length;
  return flat;
}

/** One schema for the variants of a property: the shared one, an enum of constants, or a union of the differing ones. */
function merged(variants: JsonSchema[], as: "anyOf" | "allOf"): JsonSchema {
  const distinct = [...new Map(variants.map((v) => [stable(v), v])).values()];
  if (distinct.length === 1) return distinct[0];
  if (
    as === "anyOf" &&
    distinct.every(
      (v) => "const" in v && Object.keys(v).every((k) => ["const", "type", "title", "description"].includes(k)),
    )
  ) {
    const types = new Set(distinct.map((v) => stable(v.type)));
    const description = distinct.find((v) => typeof v.description === "string")?.description;
    return {
      ...(types.size === 1 && distinct[0].type !== undefined ? { type: distinct[0].type } : {}),
      enum: distinct.map((v) => v.const),
      ...(description !== undefined ? { description } : {}),
    };
  }
  return { [as]: distinct };
}

/** "Accepts exactly one of these argument combinations: (1) kind="circle", radius; (2) kind="square", side." */
function combinationsLine(kind: Exclude<Union, "allOf">, branches: JsonSchema[], parts: Flat[]): string {
  const each = parts.map((part, i) => {
    const b = branches[i];
    const names = part.required.size ? [...part.required] : [...part.properties.keys()];
    const args = names.map((n) => {
      const only = part.properties.get(n);
      return only?.length === 1 && "const" in only[0] ? `${n}=${stable(only[0].const)}` : n;
    });
    const label = typeof b.title === "string" ? `${b.title}: ` : "";
    return `(${i + 1}) ${label}${args.length ? args.join(", ") : "no arguments"}`;
  });
  const how = kind === "oneOf" ? "exactly one of" : "one or more of";
  return `Accepts ${how} these argument combinations: ${each.join("; ")}.`;
}
