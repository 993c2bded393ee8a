// GET /v1/search: the tenant's cortex shard over its messages, notes, episodes and pages.
import { type Context, Hono } from "hono";
import { z } from "zod";
import { isId } from "../../../core/ids";
import { shownSnippet } from "../../../agent/tools/memory-search";
import { cortexFor } from "../../../services/cortex/routing";
import type { SearchHit } from "../../../services/cortex/search-index";
import type { CortexMark } from "../../../services/cortex/shard";
import { BOOKMARK } from "../d1-session";
import { badRequest } from "../errors";
import { listBody } from "../paging";
import type { AppEnv } from "../types";
import { intParam, query } from "../validate";
import { cortexBookmarkAnswer, doc } from "../openapi/registry";
import { listOf, searchHitSchema } from "../openapi/schemas";

export const searchRoutes = new Hono<AppEnv>();

/**
 * The cortex shard's own bookmark (its database is not DB, so `x-d1-bookmark` cannot carry it): a
 * search sent with the value of an earlier search's answer reads at least that far; without it the
 * search runs wherever is nearest ("first-unconstrained"). The value names its shard
 * (`<bookmark>@<shard>`): one of a shard the tenant has moved from means nothing to the new one, and
 * is not used. A bare bookmark (answered before 2026-12-05) is taken as before.
 */
export const CORTEX_BOOKMARK_HEADER = "x-cortex-bookmark";

/**
 * Answers `x-cortex-bookmark` for where a read or write reached the tenant's shard (nothing when it
 * reached none). Every route that writes the shard answers it as a search does, so a client that
 * sends its newest one reads its own writes (a note just deleted is not found again).
 */
export function answerCortexBookmark(c: Context, mark: CortexMark | null): void {
  if (mark) c.header(CORTEX_BOOKMARK_HEADER, `${mark.bookmark}@${mark.shard}`);
}

const SHARD_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;

/** The sent header as bookmark and shard (shard null when bare); null when it is not one. */
function sentBookmark(value: string): { bookmark: string; shard: string | null } | null {
  const at = value.lastIndexOf("@");
  const bookmark = at < 0 ? value : value.slice(0, at);
  const shard = at < 0 ? null : value.slice(at + 1);
  if (value.length > 256 || !BOOKMARK.test(bookmark) || (shard !== null && !SHARD_NAME.test(shard))) return null;
  return { bookmark, shard };
}

/**
 * A hit as answered: its snippet at most about 300 characters around the match, as memory_search
 * shows it (shownSnippet: the index's come cut so, around the real match, and are not cut again,
 * which would take a text's own U+E000/U+E001 for match marks), and `matches` always set (none for
 * a hit found by meaning alone). A message a regenerate replaced keeps its hit, marked
 * `superseded: true` and `supersededBy` by the shard's search (shard.ts markSuperseded).
 */
function answered(h: SearchHit): SearchHit & { matches: [number, number][] } {
  return { ...h, ...shownSnippet(h) };
}

const searchQuery = z.strictObject({
  q: z
    .string()
    .trim()
    .min(1, "required")
    .max(500)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a query is refused for
    .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), "no control characters"),
  conversation: z
    .string()
    .refine((v) => isId("conv", v), "not a conversation id")
    .optional(),
  kind: z.enum(["message", "memory", "episode", "page"]).optional(),
  // Whose words are sought; unset, the person's unless the query asks for the assistant's.
  said: z.enum(["user", "assistant"]).optional(),
  limit: intParam(1, 100).default(20),
  // `40`: the hits before this page. A cursor of the earlier form `and:40` / `or:40` still pages on:
  // its mode names a ranking that is now the only one, so only the offset is read.
  cursor: z
    .string()
    .regex(/^(?:(?:and|or):)?(0|[1-9]\d{0,6})$/, "not a search cursor (pass `next` back as it is)")
    .transform((v) => ({ offset: Number(v.slice(v.indexOf(":") + 1)) }))
    .optional(),
});

searchRoutes.get(
  "/",
  doc({
    summary: "Search messages, notes, episodes and pages",
    headers: [{ shared: "CortexBookmark" }],
    responses: {
      200: {
        description: "A page of hits",
        schema: listOf(searchHitSchema).extend({
          query: z.string().meta({ description: "The query searched (`q`, trimmed)" }),
        }),
        headers: cortexBookmarkAnswer,
      },
    },
  }),
  query(searchQuery),
  async (c) => {
    const { q, conversation, kind, said, limit, cursor } = c.req.valid("query");
    const tenantId = c.get("tenantId");
    const header = c.req.header(CORTEX_BOOKMARK_HEADER);
    const sent = header === undefined ? null : sentBookmark(header);
    if (header !== undefined && !sent)
      throw badRequest(
        `${CORTEX_BOOKMARK_HEADER}: not a cortex bookmark (send back a previous search's ${CORTEX_BOOKMARK_HEADER})`,
      );
    const shard = await cortexFor(c.env, tenantId);
    const { hits, next, bookmark } = await shard.search(tenantId, q, {
      conversationId: conversation,
      kinds: kind ? [kind] : undefined,
      said,
      limit,
      cursor,
      bookmark: sent && (sent.shard === null || sent.shard === shard.name) ? sent.bookmark : null,
    });
    answerCortexBookmark(c, bookmark ? { bookmark, shard: shard.name } : null);
    return c.json({ query: q, ...listBody({ data: hits.map(answered), next: next && String(next.offset) }) });
  },
);
