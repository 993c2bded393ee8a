// What a request to the API answers, as types: the operation of the OpenAPI document
// (client/api-types.gen.ts) that a method and a literal path fit, and its success answer, so tests
// read answers with the document's types (test/workers/helpers.ts and test/e2e/client.ts).
import type { Routes, Schemas } from "../client/api-types.gen";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** A path's segments: "/v1/conversations/{id}" -> ["", "v1", "conversations", "{id}"]. */
type Segments<P extends string> = P extends `${infer H}/${infer T}` ? [H, ...Segments<T>] : [P];
/** Whether a request path's segments fit a route template's: a `{param}` fits any non-empty segment. */
type SegmentsFit<T extends string[], P extends string[]> = T extends [
  infer TH extends string,
  ...infer TR extends string[],
]
  ? P extends [infer PH extends string, ...infer PR extends string[]]
    ? TH extends `{${string}}`
      ? PH extends ""
        ? false
        : SegmentsFit<TR, PR>
      : PH extends TH
        ? SegmentsFit<TR, PR>
        : false
    : false
  : P extends []
    ? true
    : false;
type WithoutQuery<P extends string> = P extends `${infer B}?${string}` ? B : P;

/**
 * The operations of the OpenAPI document (client/api-types.gen.ts) that a request fits, e.g.
 * RouteOf<"GET", `/v1/conversations/${string}/messages?after=0`> is "GET /v1/conversations/{id}/messages".
 */
export type RouteOf<M extends Method, P extends string> = MostSpecific<Fitting<M, P>>;

type Fitting<M extends Method, P extends string> = {
  [K in keyof Routes]: K extends `${M} ${infer T}`
    ? SegmentsFit<Segments<T>, Segments<WithoutQuery<P>>> extends true
      ? K
      : never
    : never;
}[keyof Routes];
type TemplateOf<K> = K extends `${string} ${infer T}` ? T : never;
/** K2 is more specific than K: a literal segment where K has a parameter ("/v1/memory/episodes" over "/v1/memory/{id}"). */
type MoreSpecific<K2, K> =
  SegmentsFit<Segments<TemplateOf<K>>, Segments<TemplateOf<K2>>> extends true
    ? SegmentsFit<Segments<TemplateOf<K2>>, Segments<TemplateOf<K>>> extends true
      ? false
      : true
    : false;
/** Of the fitting operations, those no other fitting one is more specific than (the router's literal-first match). */
type MostSpecific<All extends string, Each extends string = All> = Each extends unknown
  ? { [K2 in All]: MoreSpecific<K2, Each> extends true ? K2 : never }[All] extends never
    ? Each
    : never
  : never;

/** The error body of every non-2xx answer. */
export type ApiError = Schemas["Error"]["error"];
/** A JSON body as tests read it: the success answer, or an error (`error` is set only on a non-2xx). */
export type Body<T> = [T] extends [null] ? { error?: ApiError } | undefined : T & { error?: ApiError };
/** What the operation a request fits answers; a path that fits none (or is only known as `string`) answers only errors. */
export type ResponseOf<M extends Method, P extends string> = [RouteOf<M, P>] extends [never]
  ? Body<unknown>
  : Body<Routes[RouteOf<M, P>]["response"]>;
