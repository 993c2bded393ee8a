// Request validation: zod schemas with errors that name the field. JSON bodies are decoded here
// rather than by the framework so that hostile bytes get a precise 400: invalid UTF-8 is refused
// (never silently replaced), as are lone surrogates and absurd nesting.
import { zValidator } from "@hono/zod-validator";
import type { Env as HonoEnv, MiddlewareHandler } from "hono";
import { z } from "zod";
import { jsonValueProblem } from "../../core/json-guard";
import { describeZodError } from "../../core/validation";
import { visibleText } from "../../core/visible-text";
import { ApiError, badRequest } from "./errors";
import { parseMediaType, refuseNonUtf8Charset } from "./media-type";
import { recordInput } from "./openapi/registry";

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Rejects a non-JSON body up front, so a wrong Content-Type is a 415, not a confusing "field required";
 * so is a charset other than UTF-8, before the body is read.
 */
const requireJson: MiddlewareHandler = async (c, next) => {
  const type = parseMediaType(c.req.header("content-type"));
  if (!JSON_TYPE.test(type.essence))
    throw new ApiError(415, "unsupported_media_type", "Content-Type must be application/json");
  refuseNonUtf8Charset(type);
  await next();
};

/** Strict UTF-8 JSON: bytes -> text (fatal decoder) -> value, then a bounded walk of the value. */
export function parseJsonBytes(bytes: ArrayBuffer | Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw badRequest("body: not valid UTF-8");
  }
  if (!text.trim()) throw badRequest("body: empty; send a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(`body: malformed JSON (${err instanceof Error ? err.message.slice(0, 120) : "parse error"})`);
  }
  const problem = jsonValueProblem(value);
  if (problem) throw badRequest(problem);
  return value;
}

type JsonValidator<T extends z.ZodType> = MiddlewareHandler<
  HonoEnv,
  string,
  { in: { json: z.input<T> }; out: { json: z.output<T> } }
>;

export const jsonBody = <T extends z.ZodType>(schema: T) => {
  const validate: JsonValidator<T> = async (c, next) => {
    const value = parseJsonBytes(await c.req.arrayBuffer());
    const result = await schema.safeParseAsync(value);
    if (!result.success) throw badRequest(describeZodError(result.error));
    c.req.addValidatedData("json", result.data as object);
    await next();
  };
  return [requireJson, recordInput(validate, { json: schema })] as const;
};

/**
 * Query strings: broken percent-encoding (which the router would pass through undecoded, so
 * "%FF" would arrive as a literal) is a 400 before the schema sees anything.
 */
export const query = <T extends z.ZodType>(schema: T) => {
  const validator = zValidator("query", schema, (result) => {
    if (!result.success) throw badRequest(describeZodError(result.error));
  });
  const strict: typeof validator = async (c, next) => {
    queryFields(c.req.url);
    return validator(c, next);
  };
  return recordInput(strict, { query: schema });
};

/**
 * The names of a URL's query parameters, in order (a repeated one as often as given): a part that
 * is not valid percent-encoded UTF-8 is a 400 naming it. Empty parts ("?", "a=1&&b=2") are none.
 */
export function queryFields(url: string): string[] {
  const raw = url.slice(url.indexOf("?") + 1 || url.length);
  const names: string[] = [];
  for (const part of raw ? raw.split("&") : []) {
    try {
      decodeURIComponent(part.replace(/\+/g, " "));
    } catch {
      throw badRequest(`query: "${part.slice(0, 40)}" is not valid percent-encoded UTF-8`);
    }
    if (part) names.push(decodeURIComponent(part.split("=")[0].replace(/\+/g, " ")));
  }
  return names;
}

/**
 * On a route that declares no query (neither query() nor doc's `query`): any parameter is a 400
 * naming it, as a route with a strict schema answers an unknown one.
 */
export function refuseQuery(url: string): void {
  const names = [...new Set(queryFields(url))];
  if (names.length)
    throw badRequest(
      `unknown field ${names.map((n) => n.slice(0, 40)).join(", ")}: this route takes no query parameters`,
    );
}

/** A UTC day, YYYY-MM-DD, that exists (no 2024-02-30), from 1970 on (so a range before it stays a day). */
export const calendarDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "a UTC day, YYYY-MM-DD")
  .refine(
    (d) =>
      d >= "1970-01-01" &&
      !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) &&
      new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
    "not a calendar day from 1970 on",
  );

/**
 * The bounds of every intParam. A query arrives as text, so the schema that checks it starts as a
 * string of digits, which is all a JSON Schema of its input would say; the OpenAPI document reads
 * the bounds here to state the integer a client may send (openapi/document.ts).
 */
export const intParamBounds = z.registry<{ minimum: number; maximum: number }>();

/** A decimal integer query parameter ("0x10", "1e1", "" and "1.0" are not numbers here). */
export const intParam = (min: number, max: number) => {
  const schema = z
    .string()
    .regex(/^\d{1,15}$/, "a decimal integer")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
  // 15 digits at most: a larger maximum (Number.MAX_SAFE_INTEGER has 16) is bounded by the digits.
  intParamBounds.add(schema, { minimum: min, maximum: Math.min(max, 999_999_999_999_999) });
  return schema;
};

/**
 * A name people read in lists and a prompt may quote (a project's name, a conversation's title): it
 * must show something (one of only format characters such as U+200B or U+202E looks empty
 * everywhere), and, like a file's name, it carries no control characters, line separators or bidi
 * overrides. Trimmed; 1 to 200 characters.
 */
export const visibleName = visibleText(200);
