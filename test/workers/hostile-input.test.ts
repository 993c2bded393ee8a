// Hostile input: a deterministic fuzz run over every route the app registers and every websocket
// frame type. Malformed JSON, wrong types, huge and deeply nested bodies, invalid UTF-8, path
// tricks in ids and names, junk queries, bad auth and oversized headers: every answer is a 4xx
// with the JSON error shape, and nothing is written anywhere (D1, R2, the conversations). Input at
// the very edge of what a schema accepts is taken, never a 500.
import { beforeAll, describe, expect, inject, it } from "vitest";
import { HEADER_VALUE_MAX_CHARS, MAX_HEADERS } from "../../core/tenant-tool-rules";
import { CHANNEL_NAME } from "../../workers/chat/routes/channels";
import {
  ADMIN,
  api,
  connectSocket,
  createConversation,
  eventually,
  newTenant,
  send,
  turnMessages,
  type Method,
} from "./helpers";
import {
  conversationState,
  fillPath,
  INPUTLESS,
  ownEverything,
  paramKind,
  paramsOf,
  registeredRoutes,
  ROUTES,
  storeSnapshot,
  type Owned,
  type RouteSpec,
} from "./hostile-fixtures";
import { toolResults } from "../blocks";

/** What the tool server saw of each request (test/workers/http-tool-server.mjs). */
type Seen = { method: string; path: string; headers: Record<string, string | undefined>; body: string };

/** mulberry32: the same seed gives the same cases on every run. */
function seeded(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const SEED = 0x5eed_0010;

interface Case {
  type: "path" | "body" | "query" | "header" | "method";
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

const TURN_LIMIT = 12 * 1024 * 1024;
const BODY_LIMIT = 256 * 1024;
const enc = new TextEncoder();
const concat = (...parts: (string | number[])[]) => {
  const chunks = parts.map((p) => (typeof p === "string" ? enc.encode(p) : Uint8Array.from(p)));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, at), (at += c.length);
  return out;
};

/** Segments that must never reach a resource: traversal, encodings, junk, wrong kinds, absurd lengths. */
function pathTricks(kind: string, owner: Owned, other: Owned, rand: () => number): string[] {
  const valid = kind === "part" || kind === "snapshot" ? "1" : String(owner[kind as keyof Owned]);
  const tricks = [
    "..",
    "%2e%2e",
    "..%2F..%2Fhead.json",
    "%2F",
    "%5C..%5C",
    "%00",
    `${encodeURIComponent(valid)}%00`,
    "%FF",
    "%C0%AE%C0%AE",
    "%E2%80%AE",
    "*",
    "%27%20OR%20%271%27%3D%271",
    "null",
    "undefined",
    "0",
    "-1",
    "1.5",
    "0x1",
    "1e3",
    "%201",
    `%20${encodeURIComponent(valid)}`,
    `${encodeURIComponent(valid)}%0A`,
    encodeURIComponent(valid.toUpperCase()),
    encodeURIComponent(valid.toLowerCase()),
    `${encodeURIComponent(valid)}x`,
    encodeURIComponent(valid.slice(0, -1)),
    "a".repeat(5000),
    "%F0%9F%92%A3",
    encodeURIComponent(owner.mem),
    encodeURIComponent(owner.conv.replace("conv_", "mem_")),
  ];
  // The other tenant's resource of the same kind, and a random well-formed id that exists nowhere.
  // (Not for a tenant id: only the operator names tenants, and it may reach every one.)
  if (kind !== "part" && kind !== "snapshot" && kind !== "date" && kind !== "tenantId")
    tricks.push(encodeURIComponent(String(other[kind as keyof Owned])));
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  const randomId = (prefix: string) =>
    `${prefix}_${Array.from({ length: 26 }, () => alphabet[Math.floor(rand() * 32)]).join("")}`;
  const prefix = valid.split("_")[0];
  if (/^[a-z]+$/.test(prefix) && valid.includes("_")) tricks.push(randomId(prefix));
  if (kind === "date") tricks.push("2025-13-01", "2025-02-30x", "99999-01-01", "2025-1-1", "1970-01-01T00:00:00Z");
  if (kind === "part" || kind === "snapshot") tricks.push("10001", "99999999999999999999", "01");
  // A valid channel name is a channel (PATCH creates it): only names the pattern refuses are tricks there.
  const refused = tricks.filter((t) => safeDecode(t) !== valid);
  return kind === "channel" ? refused.filter((t) => !CHANNEL_NAME.test(safeDecode(t))) : refused;
}
const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Every leaf of the sample, replaced by values of the wrong type or out of range. */
function wrongTypes(sample: unknown, rand: () => number): { label: string; value: unknown }[] {
  const out: { label: string; value: unknown }[] = [];
  const walk = (v: unknown, path: (string | number)[]) => {
    const replaceWith = (w: unknown, why: string) =>
      out.push({ label: `${path.join(".")}=${why}`, value: setAt(sample, path, w) });
    if (Array.isArray(v)) {
      for (const w of ["x", 1, null, {}, [null], [[[]]], [12345]]) replaceWith(w, JSON.stringify(w));
      replaceWith(
        Array.from({ length: 10_001 }, () => v[0] ?? "x"),
        "array of 10001",
      );
      v.forEach((x, i) => walk(x, [...path, i]));
    } else if (v && typeof v === "object") {
      for (const w of ["x", 1, null, [], true]) replaceWith(w, JSON.stringify(w));
      replaceWith({ ...(v as object), [`unknownKey${Math.floor(rand() * 1000)}`]: 1 }, "unknown key");
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    } else if (typeof v === "string") {
      for (const w of [0, -1, true, null, [], {}, [v], { $ne: null }]) replaceWith(w, JSON.stringify(w));
    } else if (typeof v === "number") {
      for (const w of [String(v), null, true, [], {}, -1, 1.5, 1e300, -0.5]) replaceWith(w, JSON.stringify(w));
    } else if (typeof v === "boolean") {
      for (const w of ["true", 1, 0, null, [], {}]) replaceWith(w, JSON.stringify(w));
    }
  };
  walk(sample, []);
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown): unknown {
  if (!path.length) return value;
  // An array stays an array; either is indexed by the path's key.
  const copy = (Array.isArray(root) ? [...root] : { ...(root as object) }) as Record<string | number, unknown>;
  copy[path[0]] = setAt(copy[path[0]], path.slice(1), value);
  return copy;
}

/** Bodies no JSON route may accept. */
function badBodies(spec: RouteSpec, rand: () => number): { label: string; body: string | Uint8Array }[] {
  const sample = spec.sample as Record<string, unknown>;
  const json = JSON.stringify(sample);
  const limit = spec.path.endsWith("/messages") ? TURN_LIMIT : BODY_LIMIT;
  const out: { label: string; body: string | Uint8Array }[] = [
    ...[
      "{",
      '{"a":',
      "[1,]",
      "{'a':1}",
      `${json.slice(0, -1)},}`,
      "nul",
      `${json}}`,
      json + json,
      "\u0000",
      "",
      "   ",
      '{"a":NaN}',
      '{"a":Infinity}',
      '{"a":01}',
      '{"a":"\\x"}',
      "\uFEFF{",
      "<xml/>",
      "a=1&b=2",
    ].map((b) => ({ label: `malformed ${JSON.stringify(b.slice(0, 20))}`, body: b })),
    ...[[], null, 1, "s", true, [sample]].map((v) => ({
      label: `top-level ${JSON.stringify(v).slice(0, 20)}`,
      body: JSON.stringify(v),
    })),
    ...wrongTypes(sample, rand).map(({ label, value }) => ({
      label: `wrong type ${label}`,
      body: JSON.stringify(value),
    })),
    { label: "extra field", body: JSON.stringify({ ...sample, extra: 1 }) },
    { label: "__proto__ key", body: `{"__proto__":{"admin":true},${json.slice(1)}` },
    { label: "constructor key", body: `{"constructor":{"prototype":{"admin":true}},${json.slice(1)}` },
    { label: "huge", body: `{"x":"${"x".repeat(limit)}"}` },
    { label: "deep arrays", body: `{"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}` },
    { label: "deep objects", body: `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}` },
    { label: "lone surrogate key", body: `{"\\ud800":1,${json.slice(1)}` },
  ];
  const withSurrogate = json.replace(/:"/, ':"\\udfff');
  if (withSurrogate !== json) out.push({ label: "lone surrogate value", body: withSurrogate });
  const firstValueString = /:"((?:[^"\\]|\\.)*)"/.exec(json);
  for (const [name, bytes] of [
    ["0xFF", [0xff]],
    ["overlong slash", [0xc0, 0xaf]],
    ["encoded surrogate", [0xed, 0xa0, 0x80]],
    ["5-byte", [0xf8, 0x88, 0x80, 0x80, 0x80]],
    ["truncated", [0xe2, 0x82]],
    ["lone continuation", [0x80]],
  ] as const) {
    out.push({ label: `invalid UTF-8 key ${name}`, body: concat('{"', [...bytes], `":1,${json.slice(1)}`) });
    if (firstValueString) {
      const at = firstValueString.index + 2;
      out.push({ label: `invalid UTF-8 value ${name}`, body: concat(json.slice(0, at), [...bytes], json.slice(at)) });
    }
  }
  // A sprinkle of random bytes over the sample: seeded, so the same every run.
  for (let i = 0; i < 8; i++) {
    const bytes = enc.encode(json);
    const at = Math.floor(rand() * bytes.length);
    out.push({
      label: `random byte ${i}`,
      body: concat(json.slice(0, at), [0x80 + Math.floor(rand() * 0x7f)], json.slice(at)),
    });
  }
  return out;
}

/** Query strings no route may accept. */
function badQueries(q: Record<string, string>, route: string): { label: string; query: string }[] {
  const base = new URLSearchParams(q).toString();
  const out = [
    { label: "unknown param", query: `${base}&zzz=1` },
    { label: "invalid percent-encoding %FF", query: `${base}&${Object.keys(q)[0]}=%FF` },
    { label: "broken percent-encoding", query: `${Object.keys(q)[0]}=%E0%A4%A` },
    { label: "lone %", query: `${Object.keys(q)[0]}=%` },
  ];
  for (const [k, v] of Object.entries(q)) {
    const rest = Object.entries(q)
      .filter(([x]) => x !== k)
      .map(([x, y]) => `${x}=${encodeURIComponent(y)}`);
    const withValue = (value: string) => [...rest, `${k}=${value}`].join("&");
    const numeric = /^\d+$/.test(v);
    const values = numeric
      ? ["", "abc", "-1", "1.5", "1e400", "0x10", "1e1", "%00", "9".repeat(400), "%201", "Infinity", "NaN"]
      : k === "name"
        ? ["", "a%2Fb", "..%5Cx", "%00", "x".repeat(201), "%0A"]
        : ["", "x".repeat(501), "%00"];
    for (const value of values) out.push({ label: `${k}=${value.slice(0, 12)}`, query: withValue(value) });
    out.push({ label: `${k} repeated`, query: `${withValue(encodeURIComponent(v))}&${k}=${encodeURIComponent(v)}` });
    out.push({ label: `${k}[]`, query: `${rest.join("&")}&${k}[]=${encodeURIComponent(v)}` });
  }
  if (route === "/v1/search")
    out.push(
      { label: "conversation not an id", query: `${base}&conversation=..%2F` },
      { label: "kind unknown", query: `${base}&kind=secret` },
      { label: "said unknown", query: `${base}&said=system` },
    );
  return out;
}

function buildCases(owner: Owned, other: Owned): Case[] {
  const rand = seeded(SEED);
  const cases: Case[] = [];
  const auth = (spec: RouteSpec) => ({ authorization: `Bearer ${spec.admin ? ADMIN : owner.key}` });
  const bodyFor = (spec: RouteSpec): { headers: Record<string, string>; body?: string } =>
    spec.body === "json"
      ? { headers: { "content-type": "application/json" }, body: JSON.stringify(spec.sample) }
      : spec.body === "raw"
        ? { headers: { "content-type": "text/plain" }, body: "" }
        : { headers: {} };
  const qs = (spec: RouteSpec) => (spec.query ? `?${new URLSearchParams(spec.query)}` : "");

  for (const spec of ROUTES) {
    const { headers: bodyHeaders, body } = bodyFor(spec);
    // A raw upload with a good path and query would store the file: its path cases carry an empty body (a 400 / 411 if the path were accepted).
    for (const param of paramsOf(spec.path)) {
      for (const trick of pathTricks(paramKind(spec.path, param), owner, other, rand))
        cases.push({
          type: "path",
          label: `${param}=${trick.slice(0, 30)}`,
          method: spec.method,
          path: fillPath(spec.path, owner, { [param]: trick }) + qs(spec),
          headers: { ...auth(spec), ...bodyHeaders },
          body,
        });
    }
    if (spec.body === "json")
      for (const b of badBodies(spec, rand))
        cases.push({
          type: "body",
          label: b.label,
          method: spec.method,
          path: fillPath(spec.path, owner) + qs(spec),
          headers: { ...auth(spec), "content-type": "application/json" },
          body: b.body,
        });
    if (spec.body === "json")
      for (const type of [
        "",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonp",
        "applicationjson",
        "APPLICATION/XML",
        "json",
        "application/json\u0000",
      ])
        cases.push({
          type: "header",
          label: `content-type ${JSON.stringify(type)}`,
          method: spec.method,
          path: fillPath(spec.path, owner) + qs(spec),
          headers: { ...auth(spec), ...(type ? { "content-type": type.replace("\u0000", "%00") } : {}) },
          body,
        });
    if (spec.body === "raw") {
      cases.push({
        type: "body",
        label: "empty upload",
        method: spec.method,
        path: fillPath(spec.path, owner) + qs(spec),
        headers: { ...auth(spec), "content-type": "text/plain" },
        body: "",
      });
    }
    if (spec.query)
      for (const q of badQueries(spec.query, spec.path))
        cases.push({
          type: "query",
          label: q.label,
          method: spec.method,
          path: `${fillPath(spec.path, owner)}?${q.query}`,
          headers: { ...auth(spec), ...bodyHeaders },
          body: spec.body === "raw" ? "x" : body,
        });
    const path = fillPath(spec.path, owner) + qs(spec);
    for (const [label, authorization] of [
      ["no auth", undefined],
      ["basic scheme", `Basic ${btoa("dev:dev-local-key")}`],
      ["empty bearer", "Bearer "],
      ["bearer twice", `Bearer ${owner.key} ${owner.key}`],
      ["wrong case key", `Bearer ${owner.key.toUpperCase()}`],
      ["key prefix", `Bearer ${owner.key.slice(0, -1)}`],
      ["sql in key", "Bearer ck_'OR'1'='1"],
      ["8 KiB key", `Bearer ${"k".repeat(8192)}`],
      ["admin token as key", spec.admin ? `Bearer ${owner.key}` : `Bearer ${ADMIN}`],
    ] as const)
      cases.push({
        type: "header",
        label: label,
        method: spec.method,
        path,
        headers: { ...bodyHeaders, ...(authorization ? { authorization } : {}) },
        body,
      });
    // Turns take an Idempotency-Key: a malformed one (or any on a channel) is refused before anything runs.
    if (spec.method === "POST" && spec.path.endsWith("/messages"))
      for (const key of ["", "k".repeat(256), "a\tb", "x".repeat(8192)])
        cases.push({
          type: "header",
          label: `idempotency-key ${JSON.stringify(key.slice(0, 12))}`,
          method: spec.method,
          path,
          headers: { ...auth(spec), ...bodyHeaders, "idempotency-key": key },
          body,
        });
    cases.push({
      type: "header",
      label: "40 KiB header",
      method: spec.method,
      path,
      headers: { ...auth(spec), ...bodyHeaders, "x-junk": "j".repeat(40 * 1024) },
      body,
    });
    const many: Record<string, string> = {};
    for (let i = 0; i < 300; i++) many[`x-h${i}`] = "v".repeat(120);
    cases.push({
      type: "header",
      label: "300 headers",
      method: spec.method,
      path,
      headers: { ...auth(spec), ...bodyHeaders, ...many },
      body,
    });
  }
  // Methods a path does not have.
  const byPath = new Map<string, Set<string>>();
  for (const spec of ROUTES) byPath.set(spec.path, new Set([...(byPath.get(spec.path) ?? []), spec.method]));
  for (const route of INPUTLESS) byPath.set(route.split(" ")[1], new Set([route.split(" ")[0]]));
  for (const [path, methods] of byPath)
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND"])
      if (!methods.has(method))
        cases.push({
          type: "method",
          label: method,
          method,
          path: fillPath(path, owner),
          headers: { authorization: `Bearer ${owner.key}` },
        });
  return cases;
}

let owner: Owned;
let other: Owned;

beforeAll(async () => {
  owner = await ownEverything("a");
  other = await ownEverything("b");
}, 60_000);

describe("hostile input", () => {
  it("covers every route the app registers", () => {
    expect([...ROUTES.map((r) => `${r.method} ${r.path}`), ...INPUTLESS].sort()).toEqual(registeredRoutes());
  });

  it("answers every fuzzed request with a JSON 4xx and writes nothing", async () => {
    const cases = buildCases(owner, other);
    const before = await storeSnapshot();
    const states = await Promise.all([owner.conv, owner.channelConv].map((id) => conversationState(owner, id)));
    const counts: Record<string, number> = {};
    const statuses: Record<string, number> = {};
    const failures: string[] = [];
    for (const c of cases) {
      counts[c.type] = (counts[c.type] ?? 0) + 1;
      const r = await api(c.method as Method, c.path, c.body, { key: "", headers: c.headers, raw: true });
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      const shapeOk =
        typeof r.json?.error?.type === "string" &&
        typeof r.json?.error?.message === "string" &&
        /json/.test(r.headers.get("content-type") ?? "");
      if (r.status < 400 || r.status >= 500 || !shapeOk)
        failures.push(
          `${c.type} ${c.label}: ${c.method} ${c.path.slice(0, 140)} -> ${r.status} ${r.text.slice(0, 160)}`,
        );
    }
    const total = cases.length;
    console.log(
      `hostile input: ${total} requests (${Object.entries(counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}); statuses ${JSON.stringify(statuses)}`,
    );
    expect(failures).toEqual([]);
    expect(Object.keys(statuses).filter((s) => Number(s) >= 500)).toEqual([]);
    expect(total).toBeGreaterThan(2500);
    expect(await storeSnapshot()).toEqual(before);
    expect(await Promise.all([owner.conv, owner.channelConv].map((id) => conversationState(owner, id)))).toEqual(
      states,
    );
  }, 240_000);

  it("refuses a transcript import nested past the JSON limit anywhere, or over its body limit, naming the limit, and writes nothing", async () => {
    const before = await storeSnapshot();
    const exchanges = Array.from({ length: 300 }, (_, i) => [
      { role: "user", content: `q${i}` },
      { role: "assistant", content: `a${i}` },
    ]).flat();
    const nest = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    const valid = JSON.stringify({ messages: exchanges });
    const post = (body: BodyInit, type = "application/json", headers: Record<string, string> = {}) =>
      api("POST", "/v1/conversations/import", body, {
        key: owner.key,
        raw: true,
        headers: { "content-type": type, ...headers },
      });
    const refusals: [string, BodyInit, string, number, string?][] = [
      // Outside the messages: a junk field before them, and one after 600 messages (a chunk already staged).
      [
        "junk before",
        `{"junk": ${nest(1_000_000)}, "messages": ${JSON.stringify(exchanges)}}`,
        "body: nested deeper than 64 levels",
        400,
      ],
      ["junk after", `${valid.slice(0, -1)}, "junk": {"a": ${nest(100)}}}`, "body: nested deeper than 64 levels", 400],
      ["never closed", `{"junk": ${"[".repeat(1_000_000)}`, "body: nested deeper than 64 levels", 400],
      // Inside a message, JSON or a JSONL line: measured from the message, whose content blocks'
      // fields may nest 64 levels (67 from its own brace: core/transcript/message-scanner.ts).
      [
        "in a message",
        JSON.stringify({ messages: [{ role: "user", content: "x", junk: JSON.parse(nest(67)) }] }),
        "messages[0]: nested deeper than 67 levels (64 inside a content block's fields)",
        400,
      ],
      [
        "JSONL line",
        `${JSON.stringify(exchanges[0])}\n${"[".repeat(1_000_000)}\n`,
        "messages[1] (line 2): nested deeper than 67 levels (64 inside a content block's fields)",
        400,
        "application/x-ndjson",
      ],
    ];
    for (const [label, body, message, status, type] of refusals) {
      const r = await post(body, type);
      expect(r.status, `${label}: ${r.text.slice(0, 200)}`).toBe(status);
      expect(r.json.error).toEqual({ type: "invalid_request", message });
    }
    // A body past 64 MiB: a valid transcript behind an ignored field that makes it too long, sent
    // without a length (counted as it arrives) and with one (refused before it is read).
    const LIMIT = 64 * 1024 * 1024;
    const chunk = new TextEncoder().encode("p".repeat(1024 * 1024));
    const oversized = () => {
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent === 0) c.enqueue(new TextEncoder().encode('{"pad": "'));
          if (sent <= LIMIT) c.enqueue(chunk), (sent += chunk.length);
          else c.enqueue(new TextEncoder().encode(`", "messages": ${JSON.stringify(exchanges)}}`)), c.close();
        },
      });
    };
    const streamed = await post(oversized());
    expect(streamed.status, streamed.text.slice(0, 200)).toBe(413);
    expect(streamed.json.error).toEqual({
      type: "payload_too_large",
      message: `request body larger than ${LIMIT} bytes`,
    });
    const declared = new FixedLengthStream(LIMIT + 1);
    const declaredAnswer = await post(declared.readable);
    expect(declaredAnswer.status, declaredAnswer.text.slice(0, 200)).toBe(413);
    expect(declaredAnswer.json.error).toEqual({
      type: "payload_too_large",
      message: `request body larger than ${LIMIT} bytes`,
    });
    // Staging removed with each refusal (the delete is awaited before the answer).
    expect(await storeSnapshot()).toEqual(before);
    // The same transcript without the junk imports.
    expect((await post(valid)).status).toBe(201);
    // Its indexing (into the tenant's D1 shard) and then its listing row land in the background:
    // settled here, so the next test's snapshot does not catch them landing.
    let last = JSON.stringify(await storeSnapshot());
    await eventually(async () => {
      await new Promise((r) => setTimeout(r, 500));
      const now = JSON.stringify(await storeSnapshot());
      const settled = now === last;
      last = now;
      return settled || null;
    });
  }, 120_000);

  it("answers every bad websocket frame with an error frame, keeps the socket, and writes nothing", async () => {
    const c = await connectSocket(`/v1/conversations/${owner.conv}/ws`, { authorization: `Bearer ${owner.key}` });
    expect(c.status).toBe(101);
    const before = await storeSnapshot();
    const state = await conversationState(owner, owner.conv);
    const send = { type: "send", content: "hello" };
    const frames: (string | Uint8Array)[] = [
      "{",
      "",
      " ",
      "null",
      "[]",
      "1",
      '"send"',
      '{"type":"send",}',
      "\u0000",
      '{"type":"send","content":"x"}{',
      "<frame/>",
      ...[1, null, "", "SEND", "launch", ["send"], {}].map((type) => JSON.stringify({ type })),
      ...wrongTypes(send, seeded(SEED + 1))
        .filter((w) => !w.label.startsWith("="))
        .map((w) => JSON.stringify(w.value)),
      ...[
        [],
        [1],
        [{ type: "text" }],
        [{ type: "text", text: "" }],
        [{ type: "image", source: { type: "url", url: "http://169.254.169.254/" } }],
        [{ type: "tool_result", tool_use_id: "x", content: "y" }],
        [{ type: "document", source: {} }],
        Array.from({ length: 51 }, () => ({ type: "text", text: "x" })),
      ].map((content) => JSON.stringify({ type: "send", content })),
      ...[["x"], "att", [1], [`att_${"0".repeat(26)}`], Array.from({ length: 21 }, () => "a")].map((attachments) =>
        JSON.stringify({ type: "send", content: "x", attachments }),
      ),
      ...["", " lead", "trail ", "k".repeat(256), "caf\u00e9", "a\nb", 1, null, ["k"], { k: 1 }].map((idempotencyKey) =>
        JSON.stringify({ ...send, idempotencyKey }),
      ),
      JSON.stringify({ ...send, extra: 1 }),
      JSON.stringify({ type: "ping", x: 1 }),
      `{"__proto__":{"type":"send"},"type":"ping","x":1}`,
      `{"type":"send","content":"\\ud800"}`,
      `{"type":"send","content":[{"type":"text","text":"ok\\udc00"}]}`,
      `{"type":"send","content":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
      `{"type":"send","content":"${"x".repeat(1_000_001)}"}`,
      concat(JSON.stringify(send)),
      Uint8Array.from([0xff, 0xfe, 0x7b]),
    ];
    for (const f of frames) c.ws!.send(f);
    c.ws!.send(JSON.stringify({ type: "ping" }));
    await c.next((e) => e.type === "pong", 30_000);
    const errors = c.events.filter((e) => e.type === "error");
    console.log(`hostile websocket frames: ${frames.length} sent, ${errors.length} error frames`);
    expect(c.events.filter((e) => e.type !== "error" && e.type !== "pong")).toEqual([]);
    expect(errors).toHaveLength(frames.length);
    // Every error frame names its turn: the refused turn's id, or null for a frame that was no turn.
    for (const e of errors) {
      expect(e).toMatchObject({ error: { type: "invalid_request", message: expect.any(String) } });
      expect(e.turnId === null || /^turn_/.test(String(e.turnId)), JSON.stringify(e)).toBe(true);
    }
    expect(errors.some((e) => e.turnId === null)).toBe(true);
    c.ws!.close();
    expect(await storeSnapshot()).toEqual(before);
    expect(await conversationState(owner, owner.conv)).toEqual(state);
  }, 60_000);
});

describe("tool secrets at the edges of what the schema accepts", () => {
  const toolServer = inject("httpToolServer");
  const seen = async (tag: string): Promise<Seen[]> =>
    (await (await fetch(`${toolServer}/_seen?key=${tag}`)).json()) as Seen[];
  const resultsOf = (r: { text: string }) => toolResults(turnMessages(r));

  it("stores and sends the largest headers a tool may have (20 values of 4,096 characters JSON escapes)", async () => {
    const key = await newTenant();
    // Quotes and backslashes: two bytes each in the sealed JSON (values are visible ASCII), and still
    // a value fetch can send.
    const headers = (fill: string) =>
      Object.fromEntries(
        Array.from({ length: MAX_HEADERS }, (_, i) => [
          `x-big-${String(i).padStart(2, "0")}`,
          fill.repeat(HEADER_VALUE_MAX_CHARS),
        ]),
      );
    const created = await api(
      "POST",
      "/v1/tools",
      {
        kind: "http",
        name: "big_headers",
        description: "Echoes its request.",
        inputSchema: { type: "object" },
        endpoint: `${toolServer}/echo?key=big-headers`,
        headers: headers('"'),
      },
      { key },
    );
    expect(created.status, created.text).toBe(201);
    expect(created.json.headers).toEqual(Object.keys(headers('"')));
    const patched = await api("PATCH", `/v1/tools/${created.json.id}`, { headers: headers("\\") }, { key });
    expect(patched.status, patched.text).toBe(200);

    const id = await createConversation(undefined, key);
    const turn = await send(id, `@tool tool_activate {"name":"big_headers"}\n@tool big_headers {}`, key);
    expect(resultsOf(turn)[1].is_error).toBeUndefined();
    const received = (await seen("big-headers")).at(-1)!.headers as Record<string, string>;
    for (const [name, value] of Object.entries(headers("\\"))) expect(received[name] === value, name).toBe(true);
  });
});

describe("a key that moves a tool's destination does not take its sealed secrets along", () => {
  const toolServer = inject("httpToolServer");
  const mcpFixture = (path: string) => `http://127.0.0.1:${inject("mcpFixturePort")}${path}`;
  const seen = async (tag: string): Promise<Seen[]> =>
    (await (await fetch(`${toolServer}/_seen?key=${tag}`)).json()) as Seen[];
  const resultsOf = (r: { text: string }) => toolResults(turnMessages(r));
  const SECRET = "Bearer sk-original-secret-0123456789";
  const API_KEY = "original-api-key-9876543210";

  it("an HTTP tool: a new endpoint drops the headers unless the same PATCH sets them again", async () => {
    const key = await newTenant();
    const created = await api(
      "POST",
      "/v1/tools",
      {
        kind: "http",
        name: "moving",
        description: "Echoes its request.",
        inputSchema: { type: "object" },
        endpoint: `${toolServer}/echo?key=move-a`,
        headers: { Authorization: SECRET, "X-Api-Key": API_KEY },
      },
      { key },
    );
    expect(created.status, created.text).toBe(201);
    // A fresh conversation each time: one that already runs re-reads the tool list within 30 s.
    const call = async () =>
      resultsOf(
        await send(
          await createConversation(undefined, key),
          `@tool tool_activate {"name":"moving"}\n@tool moving {}`,
          key,
        ),
      )[1];
    await call();
    expect((await seen("move-a")).at(-1)!.headers).toMatchObject({ authorization: SECRET, "x-api-key": API_KEY });

    // Unchanged destination (another field, or the same endpoint again): the headers stay.
    expect(
      (await api("PATCH", `/v1/tools/${created.json.id}`, { description: "Echoes what it gets." }, { key })).json
        .headers,
    ).toEqual(["Authorization", "X-Api-Key"]);
    expect(
      (await api("PATCH", `/v1/tools/${created.json.id}`, { endpoint: `${toolServer}/echo?key=move-a` }, { key })).json
        .headers,
    ).toEqual(["Authorization", "X-Api-Key"]);

    // Another endpoint (here only its query differs) without headers: none of the old ones go there.
    const moved = await api(
      "PATCH",
      `/v1/tools/${created.json.id}`,
      { endpoint: `${toolServer}/echo?key=move-b` },
      { key },
    );
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json.headers).toEqual([]);
    expect((await api("GET", `/v1/tools/${created.json.id}`, undefined, { key })).json.headers).toEqual([]);
    const result = await call();
    expect(result.is_error).toBeUndefined();
    const arrived = (await seen("move-b")).at(-1)!.headers;
    expect(arrived.authorization).toBeUndefined();
    expect(arrived["x-api-key"]).toBeUndefined();
    expect(JSON.stringify(arrived)).not.toMatch(/sk-original-secret|original-api-key/);

    // Another endpoint with headers in the same PATCH: the new headers go there.
    const reset = await api(
      "PATCH",
      `/v1/tools/${created.json.id}`,
      { endpoint: `${toolServer}/echo?key=move-c`, headers: { Authorization: "Bearer sk-new-secret-000111222" } },
      { key },
    );
    expect(reset.json.headers).toEqual(["Authorization"]);
    await call();
    expect((await seen("move-c")).at(-1)!.headers.authorization).toBe("Bearer sk-new-secret-000111222");
  });

  it("an MCP server: a new url drops the auth header unless the same PATCH sets it again", async () => {
    const key = await newTenant();
    const created = await api(
      "POST",
      "/v1/mcp-servers",
      { name: "moving", url: mcpFixture("/private/mcp"), auth: { value: "Bearer fixture-secret-token" } },
      { key },
    );
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ hasAuth: true, toolsError: null });
    expect(
      (await api("PATCH", `/v1/mcp-servers/${created.json.id}`, { timeoutMs: 20_000 }, { key })).json.hasAuth,
    ).toBe(true);
    expect(
      (await api("PATCH", `/v1/mcp-servers/${created.json.id}`, { url: mcpFixture("/private/mcp") }, { key })).json,
    ).toMatchObject({ hasAuth: true, toolsError: null });

    // Pointed at a server that records what reaches it: the listing there carries no auth header.
    const moved = await api(
      "PATCH",
      `/v1/mcp-servers/${created.json.id}`,
      { url: `${toolServer}/echo?key=mcp-move-a` },
      { key },
    );
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json.hasAuth).toBe(false);
    expect((await api("GET", `/v1/mcp-servers/${created.json.id}`, undefined, { key })).json.hasAuth).toBe(false);
    await api("POST", `/v1/mcp-servers/${created.json.id}/refresh`, undefined, { key });
    const requests = await seen("mcp-move-a");
    expect(requests.length).toBeGreaterThan(0);
    for (const r of requests) expect(JSON.stringify(r.headers)).not.toContain("fixture-secret-token");

    // A new url and a new auth header in one PATCH: the new header goes there.
    const reset = await api(
      "PATCH",
      `/v1/mcp-servers/${created.json.id}`,
      { url: `${toolServer}/echo?key=mcp-move-b`, auth: { name: "x-api-key", value: "new-mcp-key-000111" } },
      { key },
    );
    expect(reset.json.hasAuth).toBe(true);
    expect((await seen("mcp-move-b"))[0].headers["x-api-key"]).toBe("new-mcp-key-000111");
    const back = await api(
      "PATCH",
      `/v1/mcp-servers/${created.json.id}`,
      { url: mcpFixture("/private/mcp"), auth: { value: "Bearer fixture-secret-token" } },
      { key },
    );
    expect(back.json).toMatchObject({ hasAuth: true, toolsError: null });
    expect(back.json.tools.length).toBeGreaterThan(0);
  });
});
