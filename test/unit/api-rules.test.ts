// Every request rule the offline model enforces, one fixture each in test/fixtures/api-rules/,
// run against handleMessagesRequest: the documented status, error type and (part of) the message,
// or the documented success. Rules the stand-in does not enforce are listed too, marked
// `"enforced": false` with the reason. Fixture format (see the folder's README.md):
//   { rule, source, model, request | steps, headers?, expect, enforced?, why?, note? }
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { handleMessagesRequest, resetOfflineCache } from "../../core/offline-model";
import { imageBase64, type ImageFormat } from "../../core/offline-model/image-size";

interface Expectation {
  status: number;
  type?: string;
  message?: string;
  stop_reason?: string;
  content_types?: string[];
  /** The error's `details` (matched as a subset): what the SDK maps to its typed error classes. */
  details?: Record<string, unknown>;
}
interface Step {
  request?: Record<string, unknown>;
  omit?: string[];
  endpoint?: string;
  /** Request headers, for rules that turn on a beta header (`anthropic-beta`). */
  headers?: Record<string, string>;
  expect: Expectation;
}
interface Fixture extends Partial<Step> {
  rule: string;
  source: string;
  model: string;
  enforced?: boolean;
  why?: string;
  steps?: Step[];
}

const DIR = join(import.meta.dirname, "../fixtures/api-rules");
const fixtures = readdirSync(DIR)
  .filter((name) => name.endsWith(".json"))
  .sort()
  .map((name) => [name, JSON.parse(readFileSync(join(DIR, name), "utf8")) as Fixture] as const);
/** Every fixture runs on 2026-12-03 (the catalog's data day), so lifecycles do not move under it. */
const NOW = Date.UTC(2026, 11, 3, 12);

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function at(root: unknown, path: string): unknown {
  return path
    .split(".")
    .filter(Boolean)
    .reduce<unknown>((value, key) => (value as Record<string, unknown>)?.[key], root);
}

/** Applies one edit to a value taken from an earlier response. */
function edit(value: unknown, op: Record<string, unknown>): unknown {
  const path = String(op.path ?? "");
  const keys = path.split(".").filter(Boolean);
  const last = keys.pop()!;
  const parent = keys.length ? at(value, keys.join(".")) : value;
  const target = parent as Record<string, unknown> & unknown[];
  switch (op.op) {
    case "set":
      target[last as never] = clone(op.value) as never;
      return value;
    case "remove":
      target.splice(Number(last), 1);
      return value;
    case "tamper": {
      const text = String(target[last as never]);
      const middle = Math.floor(text.length / 2);
      target[last as never] = (text.slice(0, middle) +
        (text[middle] === "A" ? "B" : "A") +
        text.slice(middle + 1)) as never;
      return value;
    }
    case "truncate":
      target[last as never] = String(target[last as never]).slice(0, -Number(op.chars ?? 8)) as never;
      return value;
    case "drop_types":
      return (value as { type: string }[]).filter((block) => !(op.types as string[]).includes(block.type));
    default:
      throw new Error(`unknown edit ${String(op.op)}`);
  }
}

/** Expands the fixture macros: `$stepN.path`, `{$from, edit}`, `$image:…`, `$text:N:unit`, `{$repeat, item}`. */
function expand(value: unknown, responses: unknown[]): unknown {
  if (typeof value === "string") {
    let match: RegExpExecArray | null;
    if ((match = /^\$step(\d+)\.(.+)$/.exec(value))) return clone(at(responses[Number(match[1])], match[2]));
    if ((match = /^\$image:(png|jpeg|gif|webp):(\d+)x(\d+)(?::(\d+))?$/.exec(value))) {
      return imageBase64(`image/${match[1]}` as ImageFormat, {
        width: Number(match[2]),
        height: Number(match[3]),
        totalBytes: Number(match[4] ?? 0),
      });
    }
    if ((match = /^\$text:(\d+):(.*)$/s.exec(value))) return match[2].repeat(Number(match[1]));
    return value;
  }
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      if (item && typeof item === "object" && "$repeat" in item) {
        const one = expand((item as { item: unknown }).item, responses);
        return Array.from({ length: Number((item as { $repeat: number }).$repeat) }, () => clone(one));
      }
      return [expand(item, responses)];
    });
  }
  if (value && typeof value === "object") {
    const object = value as Record<string, unknown>;
    if ("$from" in object) {
      let taken = expand(`$${String(object.$from)}`, responses);
      for (const op of (object.edit as Record<string, unknown>[]) ?? []) taken = edit(taken, op);
      return taken;
    }
    return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, expand(v, responses)]));
  }
  return value;
}

async function run(
  fixture: Fixture,
  step: Step,
  responses: unknown[],
): Promise<{ response: Response; json: Record<string, unknown> }> {
  const endpoint = step.endpoint ?? "POST /v1/messages";
  const [method, path] = endpoint.split(" ");
  const base: Record<string, unknown> = {
    model: fixture.model,
    max_tokens: 1024,
    messages: [{ role: "user", content: "Hello." }],
  };
  for (const key of step.omit ?? []) delete base[key];
  const body =
    method === "GET" ? undefined : JSON.stringify({ ...base, ...(expand(step.request ?? {}, responses) as object) });
  const response = await handleMessagesRequest(
    new Request(`https://offline-model.invalid${path}`, {
      method,
      body,
      headers: step.headers,
    }),
    {
      now: () => NOW,
    },
  );
  return { response, json: (await response.json()) as Record<string, unknown> };
}

describe("API rules (fixtures of the documented refusals, test/fixtures/api-rules/)", () => {
  const enforced = fixtures.filter(([, f]) => f.enforced !== false);

  it("has a fixture per rule, each naming its platform.claude.com source; unenforced ones say why", () => {
    console.log(`api-rules: ${fixtures.length} rules, ${enforced.length} enforced`);
    expect(enforced.length).toBeGreaterThanOrEqual(60);
    for (const [name, fixture] of fixtures) {
      expect(fixture.source, name).toMatch(/^https:\/\/platform\.claude\.com\/docs\//);
      if (fixture.enforced === false) expect(fixture.why, name).toBeTruthy();
      else expect(fixture.steps ?? fixture.expect, name).toBeTruthy();
    }
  });

  for (const [name, fixture] of enforced) {
    it(`${name}: ${fixture.rule}`, async () => {
      resetOfflineCache();
      const steps = fixture.steps ?? [
        {
          request: fixture.request,
          omit: fixture.omit,
          endpoint: fixture.endpoint,
          headers: fixture.headers,
          expect: fixture.expect!,
        },
      ];
      const responses: unknown[] = [];
      for (const [i, step] of steps.entries()) {
        const { response, json } = await run(fixture, step, responses);
        responses.push(json);
        const error = json.error as { type: string; message: string; details?: unknown } | undefined;
        const where = `step ${i}: ${JSON.stringify(error ?? json.stop_reason)}`;
        expect(response.status, where).toBe(step.expect.status);
        if (step.expect.type) expect(error?.type, where).toBe(step.expect.type);
        if (step.expect.message) expect(error?.message, where).toContain(step.expect.message);
        if (step.expect.details) expect(error?.details, where).toMatchObject(step.expect.details);
        if (step.expect.status >= 400 && step.expect.status < 500)
          expect(response.headers.get("x-should-retry"), where).toBe("false");
        if (step.expect.status >= 400 && step.expect.status !== 413) {
          expect(json.type, where).toBe("error");
          expect(json.request_id, where).toBe(response.headers.get("request-id"));
        }
        if (step.expect.stop_reason) expect(json.stop_reason, where).toBe(step.expect.stop_reason);
        if (step.expect.content_types)
          expect(
            (json.content as { type: string }[]).map((b) => b.type),
            where,
          ).toEqual(step.expect.content_types);
      }
      // Some fixtures build bodies of tens of megabytes (the 32 MB request limit): room for a loaded machine.
    }, 60_000);
  }
});
