// The cortex: FTS5 (BM25, porter stemming) over every persisted message, memory note, fold
// episode and attachment page. These functions run on one cortex shard, a D1 database
// (CORTEX_SHARD_n, services/cortex/shard.ts), or a session on it; callers reach a tenant's shard
// with cortexFor (services/cortex/routing.ts). Indexing is idempotent (doc_id upserts), so a retried or
// repeated run changes nothing. Every query is scoped to one tenant.
import { ftsTerms } from "../../core/fts-terms";
import { isToolResultCarrier, renderMessageText } from "../../core/render";
import { assistantWeight } from "../../core/speaker-weight";
import { contentTerms } from "../../core/stopwords";
import { closeAfterMarks, foldedLookup, foldWord, rowTerms, runPhrase, unmarkOtherWords } from "./script-terms";
import {
  COMMON_WORD_ROWS,
  COMMON_WORD_SHARE,
  CONVERSATION_LIFT,
  CONVERSATION_POOL,
  IDF_EXPONENT,
  MAX_QUERY_WORDS,
  shippedBackground,
} from "./term-stats";
import type { StoredMessage } from "../../core/types";
import { sliceWhole, wholeAt } from "../../core/text-cut";

/** Long texts are indexed in chunks so one row stays well under D1's row size limit. */
export const INDEX_CHUNK_CHARS = 20_000;
const MAX_STATEMENTS_PER_BATCH = 50;

/**
 * What the cortex functions run on: a shard's D1 database, or a Sessions API session on it (reads
 * near the caller, services/cortex/shard.ts). The benches hand in node:sqlite in the same shape.
 */
export type ShardDatabase = Pick<D1Database, "prepare" | "batch">;

export type DocKind = "message" | "memory" | "episode" | "page";

export interface CortexDoc {
  tenantId: string;
  kind: DocKind;
  /** The id the hit points at: a message, note or episode id. */
  refId: string;
  conversationId: string | null;
  seq: number | null;
  role: string | null;
  createdAt: string;
  body: string;
  /**
   * The row may already be stored with another role (a turn's refusal became known, or was
   * answered after: index-outbox.ts): the role is written even where the body is unchanged.
   */
  relabel?: boolean;
}

export interface SearchHit {
  kind: DocKind;
  id: string;
  conversationId: string | null;
  /** Set for message hits (the same as `id`), kept for clients of the first version. */
  messageId: string | null;
  seq: number | null;
  role: string | null;
  /**
   * Whose words a message hit holds (hitFrom): `role` is the transcript's, and a user message that
   * carries tool results, or a sub-agent's task, says `user` there though no person typed it. Null
   * for a note, episode or page. Set by both rankings (the lexical one's SQL, fusion.ts's vector one).
   */
  from: HitFrom | null;
  createdAt: string;
  /** At most SNIPPET_CHARS characters around the first match, each match marked `[match]`. */
  snippet: string;
  /**
   * Where the snippet's matches are: `[start, end]` of each `[match]`, brackets included (UTF-16
   * offsets), so a bracket of the text itself is never taken for one. Set on the index's hits only.
   */
  matches?: [number, number][];
  score: number;
  /**
   * Set on a message a regenerate replaced (its conversation's head marks its seq superseded), with
   * `supersededBy`, the id of the user message that replaced it: the hit stays (nothing is removed)
   * but says so, as the transcript does. Read at search time (shard.ts markSuperseded).
   */
  superseded?: true;
  supersededBy?: string;
}

/**
 * How FTS5 marks a match in a snippet, until it is cut and shown as `[match]`: private-use
 * characters, which no text of a person's is expected to hold, so a literal `[1]` is never a match.
 */
export const MATCH_OPEN = "\uE000";
export const MATCH_CLOSE = "\uE001";

/** The most characters of a hit's snippet: FTS5's snippet counts tokens, and a token may be any length. */
export const SNIPPET_CHARS = 300;

/**
 * A snippet marked with MATCH_OPEN/MATCH_CLOSE as a hit shows it: cut to at most `max` characters
 * around its first match, more of the window after the match than before (each cut end marked "…",
 * a match cut at the end closed with "…]"), at whole characters; then each match marked `[match]`,
 * with where it is (SearchHit.matches).
 */
export function cutMarkedSnippet(
  marked: string,
  max = SNIPPET_CHARS,
): { snippet: string; matches: [number, number][] } {
  let text = marked;
  if (text.length > max) {
    // Room for "…" before and "…]" after, and one more character a whole-character cut may take.
    const room = Math.max(1, max - 4);
    const open = Math.max(0, text.indexOf(MATCH_OPEN));
    const close = text[open] === MATCH_OPEN ? text.indexOf(MATCH_CLOSE, open) : -1;
    const matchEnd = close < 0 ? open : close + 1;
    // Some words before the match (a third of the window), fewer when the match itself is long.
    const lead = Math.max(0, Math.min(Math.floor(room / 3), room - (matchEnd - open)));
    const start = Math.max(0, Math.min(open - lead, text.length - room));
    const shown = sliceWhole(text, start, start + room);
    const cutInMatch = shown.lastIndexOf(MATCH_OPEN) > shown.lastIndexOf(MATCH_CLOSE);
    const tail = start + room >= text.length ? "" : cutInMatch ? `…${MATCH_CLOSE}` : "…";
    text = `${start > 0 ? "…" : ""}${shown}${tail}`;
  }
  text = closeAfterMarks(text, MATCH_CLOSE);
  const matches: [number, number][] = [];
  let from = -1;
  const snippet = text.replace(/[\uE000\uE001]/g, (mark, at: number) => {
    if (mark === MATCH_OPEN) from = at;
    else if (from >= 0) {
      matches.push([from, at + 1]);
      from = -1;
    }
    return mark === MATCH_OPEN ? "[" : "]";
  });
  return { snippet, matches };
}

/**
 * Stand-ins for the text's own MATCH_OPEN/MATCH_CLOSE while a hit's snippet is cut: lone low
 * surrogates, which no text read back from a shard holds (SQLite keeps text as UTF-8, where a lone
 * surrogate cannot be), and which no cut moves (core/text-cut.ts moves a cut only after a high one).
 */
const OWN_OPEN = "\uDC00";
const OWN_CLOSE = "\uDC01";

/**
 * A hit's snippet from the two snippets FTS5 gives of one window: `marked`, its matches between MATCH_OPEN
 * and MATCH_CLOSE, and `plain`, the same window unmarked. A text may hold those characters itself
 * (a private-use font's glyphs, a paste): what `marked` holds beyond `plain` are FTS5's marks, the
 * rest is text and is shown as it is, never as a bracket nor a match. (Were a mark next to the same
 * character of the text, either could be taken for the mark; the query's words hold no private-use
 * character, so no match starts or ends with one.) Without `plain`, or if the two do not line up,
 * every such character is taken for a mark, as cutMarkedSnippet does. With the query's `words`, a
 * match over another word than theirs that only a word's pieces made is not marked (script-terms.ts
 * unmarkOtherWords: "दाल" does not mark "दिल").
 */
export function hitSnippet(
  marked: string,
  plain: string | null,
  words: readonly string[] = [],
): { snippet: string; matches: [number, number][] } {
  const own = (text: string) => unmarkOtherWords(text, { open: MATCH_OPEN, close: MATCH_CLOSE, words });
  const masked = plain === null ? null : maskOwnMarks(marked, plain);
  if (masked === null) return cutMarkedSnippet(own(marked));
  const { snippet, matches } = cutMarkedSnippet(own(masked));
  // With `u`, only a lone stand-in matches: never the second half of a pair such as 🐀 (U+1F400).
  return { snippet: snippet.replace(/[\uDC00\uDC01]/gu, (c) => (c === OWN_OPEN ? MATCH_OPEN : MATCH_CLOSE)), matches };
}

/** `marked` with the text's own MATCH_OPEN/MATCH_CLOSE (those `plain` holds too) as OWN_OPEN/OWN_CLOSE; null if `plain` is not `marked` less marks. */
function maskOwnMarks(marked: string, plain: string): string | null {
  let out = "";
  let j = 0;
  for (let i = 0; i < marked.length; i++) {
    const c = marked[i];
    if (c === plain[j]) {
      out += c === MATCH_OPEN ? OWN_OPEN : c === MATCH_CLOSE ? OWN_CLOSE : c;
      j++;
    } else if (c === MATCH_OPEN || c === MATCH_CLOSE) out += c;
    else return null;
  }
  return j === plain.length ? out : null;
}

const docPrefix = (kind: DocKind, refId: string) => `${kind}:${refId}:`;

/**
 * A row's `terms` (script-terms.ts rowTerms: the bigrams of runs of Chinese, Japanese, Korean, Thai,
 * Lao, Khmer and Myanmar; a Latin word or number written against such a run; a word's folded form
 * where unicode61 does not fold it; a word with vowel signs whole), null if it needs none. The name
 * is the first version's, kept for its callers (rows.ts).
 */
export const cjkTerms = rowTerms;

/**
 * The upsert of one cortex_docs row, its parameters in column order (doc_id, tenant_id,
 * conversation_id, kind, ref_id, seq, role, created_at, body, terms: cjkTerms of the body). A new
 * row takes the next rowid of its tenant's range (d1-migrations/cortex-shard/0003_tenant_fts.sql), which `tenantRange` made
 * sure of earlier in the batch; the insert trigger would otherwise move it there, at the cost of a
 * second write. A doc_id is its kind, ref id and chunk, unique in the shard because ref ids are
 * minted at random; were two tenants' ever to meet, the second write leaves the first tenant's row
 * as it was (never an edit across tenants).
 */
export const INSERT_DOC = `INSERT INTO cortex_docs (rowid, doc_id, tenant_id, conversation_id, kind, ref_id, seq, role, created_at, body, terms)
  VALUES ((SELECT coalesce((SELECT max(d.rowid) FROM cortex_docs d WHERE d.rowid BETWEEN r.base AND r.base + 4294967295), r.base) + 1
           FROM cortex_tenant_ranges r WHERE r.tenant_id = ?2), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`;
export const UPSERT_DOC = `${INSERT_DOC}
  ON CONFLICT(doc_id) DO UPDATE SET body = excluded.body, terms = excluded.terms
  WHERE cortex_docs.tenant_id = excluded.tenant_id AND cortex_docs.body != excluded.body`;

/** Gives the tenant a rowid range in the shard if it has none yet (the next after the last). */
export const tenantRange = (db: ShardDatabase, tenantId: string) =>
  db
    .prepare(
      `INSERT OR IGNORE INTO cortex_tenant_ranges (tenant_id, base)
       SELECT ?, coalesce(max(base), 0) + 4294967296 FROM cortex_tenant_ranges`,
    )
    .bind(tenantId);

/**
 * The parameters of one cortex_docs row in column order (as UPSERT_DOC binds them): chunk `chunk` of
 * `d`, holding `body`.
 */
export const docParams = (d: CortexDoc, chunk: number, body: string) =>
  [
    docPrefix(d.kind, d.refId) + chunkKey(chunk),
    d.tenantId,
    d.conversationId,
    d.kind,
    d.refId,
    d.seq,
    d.role,
    d.createdAt,
    body,
    cjkTerms(body),
  ] as const;

/**
 * How far back from INDEX_CHUNK_CHARS a chunk may end to end at whitespace: a word or identifier
 * that crossed the cut would be two halves, in no chunk whole, and never found.
 */
export const CHUNK_BREAK_WINDOW = 200;

/**
 * A body's chunks of at most INDEX_CHUNK_CHARS (at least one, maybe empty). Each ends before the
 * last whitespace within CHUNK_BREAK_WINDOW of the limit, so no word is split; where that stretch
 * has none (one long token), at the limit, never inside a surrogate pair. The chunks joined are
 * the body.
 */
export function chunkBodies(body: string): string[] {
  const out: string[] = [];
  let at = 0;
  do {
    const end = chunkEnd(body, at);
    out.push(body.slice(at, end));
    at = end;
  } while (at < body.length);
  return out;
}

/** Where the chunk that starts at `at` ends (chunkBodies). */
function chunkEnd(body: string, at: number): number {
  const limit = at + INDEX_CHUNK_CHARS;
  if (limit >= body.length) return body.length;
  for (let i = limit; i > Math.max(at, limit - CHUNK_BREAK_WINDOW); i--) if (/\s/.test(body[i])) return i;
  return wholeAt(body, limit);
}

/** Upserts docs, chunked; chunks a shorter new body no longer has are removed. */
export async function upsertDocs(db: ShardDatabase, docs: readonly CortexDoc[]): Promise<void> {
  const upsert = db.prepare(UPSERT_DOC);
  const trim = db.prepare(
    `DELETE FROM cortex_docs WHERE tenant_id = ? AND kind = ? AND ref_id = ? AND doc_id >= ? AND doc_id < ?`,
  );
  // The role alone: the FTS row and the vector follow the body only (their triggers are on it).
  const relabel = db.prepare(
    `UPDATE cortex_docs SET role = ?3 WHERE tenant_id = ?1 AND kind = 'message' AND ref_id = ?2 AND role IS NOT ?3`,
  );
  const statements: D1PreparedStatement[] = [];
  for (const tenantId of new Set(docs.map((d) => d.tenantId))) statements.push(tenantRange(db, tenantId));
  for (const d of docs) {
    // NFC, as a query is looked up first (ftsSpellings): an NFD text's letters with two diacritics
    // would otherwise be other terms than the same words typed precomposed.
    const bodies = chunkBodies(d.body.normalize("NFC"));
    const chunks = bodies.length;
    bodies.forEach((body, i) => statements.push(upsert.bind(...docParams(d, i, body))));
    if (d.relabel && d.kind === "message") statements.push(relabel.bind(d.tenantId, d.refId, d.role));
    // Notes can shrink: drop chunks beyond the new last one. (Messages are immutable.)
    if (d.kind !== "message")
      statements.push(
        trim.bind(
          d.tenantId,
          d.kind,
          d.refId,
          docPrefix(d.kind, d.refId) + chunkKey(chunks),
          `${docPrefix(d.kind, d.refId)}~`,
        ),
      );
  }
  for (let i = 0; i < statements.length; i += MAX_STATEMENTS_PER_BATCH)
    await db.batch(statements.slice(i, i + MAX_STATEMENTS_PER_BATCH));
}

const chunkKey = (i: number) => String(i).padStart(5, "0");

export async function deleteDocs(
  db: ShardDatabase,
  tenantId: string,
  doc: { kind: DocKind; refId: string },
): Promise<void> {
  const { kind, refId } = doc;
  await db
    .prepare(`DELETE FROM cortex_docs WHERE tenant_id = ? AND kind = ? AND ref_id = ?`)
    .bind(tenantId, kind, refId)
    .run();
}

/**
 * A message's document. The user message that carries tool results holds no word of the person's
 * (a memory_search result echoes the query and its hits, a conversation_read the original), nor
 * does a sub-agent's (its first is the task the master model wrote, agent/sub-agent.ts): each is
 * stored as role `tool`, ranked with the assistant's discount, and its hits still say `user`, the
 * role its message has in the transcript, with `from: "tool"` (hitFrom).
 */
/** The stored role of a tool-result carrier's document, and of a sub-agent's user message (messageDoc). */
export const TOOL_ROLE = "tool";
/**
 * The stored role of a refused turn's message starts with this, its role (as messageDoc gives it)
 * after: a refused turn is left out of every later request (core/replay-rules.ts), so the model's
 * own searches leave it out too (SearchOptions.withoutRefused); a person's search still finds it.
 */
export const REFUSED_ROLE_PREFIX = "refused:";
/** The stored role of `role`'s document in a refused turn. */
export const refusedRole = (role: string | null): string => `${REFUSED_ROLE_PREFIX}${role ?? ""}`;
/** The stored role without the refused mark. */
export const unmarkedRole = (stored: string | null): string | null =>
  stored?.startsWith(REFUSED_ROLE_PREFIX) ? stored.slice(REFUSED_ROLE_PREFIX.length) : stored;
/** A document's role as a hit states it: the transcript's role (a tool-result carrier is a user message). */
export const hitRole = (stored: string | null): string | null => {
  const role = unmarkedRole(stored);
  return role === TOOL_ROLE ? "user" : role;
};
/** Whose words a message hit holds: a person's, the assistant's, or words no person typed (TOOL_ROLE). */
export type HitFrom = "person" | "assistant" | "tool";
/**
 * A hit's `from`, of its kind and stored role (the refused mark aside): the stored role says it, so
 * rows need no rewrite. Null for a note, episode or page, and for a role no message has.
 */
export const hitFrom = (kind: DocKind, stored: string | null): HitFrom | null => {
  if (kind !== "message") return null;
  const role = unmarkedRole(stored);
  return role === TOOL_ROLE ? "tool" : role === "assistant" ? "assistant" : role === "user" ? "person" : null;
};
/** Whether a message's stored role takes the assistant's discount: the assistant's words, or a tool's. */
export const discountedRole = (stored: string | null): boolean => {
  const role = unmarkedRole(stored);
  return role === "assistant" || role === TOOL_ROLE;
};
/** unmarkedRole in SQL, of a cortex_docs row `d`. */
const BARE_ROLE = `CASE WHEN substr(d.role, 1, ${REFUSED_ROLE_PREFIX.length}) = '${REFUSED_ROLE_PREFIX}' THEN substr(d.role, ${REFUSED_ROLE_PREFIX.length + 1}) ELSE d.role END`;
/** hitRole in SQL. */
const HIT_ROLE = `CASE ${BARE_ROLE} WHEN '${TOOL_ROLE}' THEN 'user' ELSE ${BARE_ROLE} END`;
/** hitFrom in SQL, as column `from`. */
const HIT_FROM = `CASE WHEN d.kind != 'message' THEN NULL ELSE CASE ${BARE_ROLE} WHEN '${TOOL_ROLE}' THEN 'tool' WHEN 'assistant' THEN 'assistant' WHEN 'user' THEN 'person' END END AS "from"`;
/** The filter of SearchOptions.withoutRefused, on a cortex_docs row `d` (a note's role is null). */
export const NOT_REFUSED = `substr(coalesce(d.role, ''), 1, ${REFUSED_ROLE_PREFIX.length}) != '${REFUSED_ROLE_PREFIX}'`;

export function messageDoc(tenantId: string, conversationId: string, m: StoredMessage): CortexDoc {
  return {
    tenantId,
    kind: "message",
    refId: m.id,
    conversationId,
    seq: m.seq,
    role: isToolResultCarrier(m) || (m.agent && m.role === "user") ? TOOL_ROLE : m.role,
    createdAt: m.createdAt,
    body: renderMessageText(m),
  };
}

/** The conversation a message belongs to, within one tenant (null if not this tenant's). */
export async function conversationOfMessage(
  db: ShardDatabase,
  tenantId: string,
  messageId: string,
): Promise<string | null> {
  const row = await db
    .prepare(
      `SELECT conversation_id AS c FROM cortex_docs WHERE tenant_id = ? AND kind = 'message' AND ref_id = ? LIMIT 1`,
    )
    .bind(tenantId, messageId)
    .first<{ c: string }>();
  return row?.c ?? null;
}

/**
 * User text -> an FTS5 query that cannot be a syntax error: every word or identifier becomes a
 * quoted phrase ("run-42.log" stays one phrase of its parts), and all phrases must match. Function
 * words ("what did I ...") are left out unless the query has nothing else.
 */
export function toFtsQuery(q: string, mode: "and" | "or" = "and"): string | null {
  const words = queryWords(q);
  if (!words) return null;
  const phrases = words.map(ftsPhrase);
  // FTS5 takes an implicit AND between phrases only, not after a parenthesised CJK word (ftsPhrase).
  const and = phrases.some((phrase) => phrase.startsWith("(")) ? " AND " : " ";
  return phrases.join(mode === "and" ? and : " OR ");
}

/**
 * A query word: a letter, digit or `_`, then those and combining marks, with its joiners. A mark
 * belongs to the word it is written in: an NFD "Việt" is one word, as is "हिंदी" whose vowel signs
 * are marks (unicode61 then tokenizes the phrase as it tokenized the text: ftsSpellings).
 */
const QUERY_WORD = /[\p{L}\p{N}_][\p{L}\p{M}\p{N}_]*(?:[-.:/@#][\p{L}\p{N}_][\p{L}\p{M}\p{N}_]*)*/gu;

/** The words of `q` a search looks for (each one FTS5 phrase), function words left out; null if none. */
export function queryWords(q: string): string[] | null {
  const terms = q.match(QUERY_WORD);
  if (!terms?.length) return null;
  // Repeats and function words go first, then the cap: a long question's rare word is often late.
  // A repeat is the same word in any case (FTS5 folds case: "Zebra" and "zebra" are one phrase,
  // which would otherwise be counted, and weighted, once per spelling); the first spelling stays.
  // So is the same word in NFC and NFD ("Việt" precomposed or as "Vie" and two marks).
  const folded = new Map<string, string>();
  for (const t of terms) {
    const key = t.normalize("NFC").toLowerCase();
    if (!folded.has(key)) folded.set(key, t);
  }
  return contentTerms([...folded.values()]).slice(0, MAX_SEARCH_TERMS);
}

/**
 * The most distinct words of a query the search looks up (each one FTS5 count); the statement
 * scores the MAX_QUERY_WORDS rarest of them. A bound for pathological queries only: a question of
 * 500 characters rarely has more content words than this.
 */
export const MAX_SEARCH_TERMS = 64;

const quoted = (word: string) => `"${word.replace(/"/g, '""')}"`;

/**
 * A query word as the FTS5 expression the ranking scores: the word as one phrase (its spellings), or,
 * where it holds a run of a script written without spaces, `("word" OR runPhrase)`: the phrase over
 * the rows' terms, so a word inside a longer run is found (`("猫" OR "\uE002猫"*)` for a one-character
 * word); or its folded form too, where unicode61 does not fold it (`("αθήνα" OR "αθηνα")`). A word a
 * combining mark cuts (Devanagari's vowel signs), or of Thai, Lao, Khmer or Myanmar letters, is not
 * looked for as written, which would be the pieces the marks cut it or the text into, but as its
 * run's bigrams or its sealed term (script-terms.ts foldedLookup): rows indexed before those terms
 * are not found by it.
 */
const ftsPhrase = (word: string) => {
  const nfc = word.normalize("NFC");
  const { cut, folded } = foldedLookup(nfc);
  const expressions = [runPhrase(nfc), folded].filter((e): e is string => e !== null);
  const spellings = cut && expressions.length ? expressions : [...ftsSpellings(word).map(quoted), ...expressions];
  return spellings.length === 1 ? spellings[0] : `(${spellings.join(" OR ")})`;
};

/**
 * A query word as written, in NFC and in NFD, less those unicode61 tokenizes alike. unicode61
 * makes different terms of a word's two forms where a letter has two diacritics (NFC "Việt" is
 * việt, NFD viet: it folds a lone combining diacritic away, a precomposed letter's only when it has
 * one), so a row is found whichever form its text was written in: rows are indexed in NFC
 * (upsertDocs), rows indexed before that as they were sent. A form whose terms are neither the NFC
 * form's nor its folded form's (script-terms.ts foldWord) is left out: unicode61 folds NFD "й" to
 * "и" as it folds any lone diacritic, and "война" is not "воина".
 */
function ftsSpellings(word: string): string[] {
  const nfc = word.normalize("NFC");
  const allowed = new Set([ftsTerms(nfc).join(" "), ftsTerms(foldWord(nfc)).join(" ")]);
  const byTerms = new Map<string, string>();
  for (const form of [word, nfc, word.normalize("NFD")]) {
    const key = ftsTerms(form).join(" ");
    if (allowed.has(key) && !byTerms.has(key)) byTerms.set(key, form);
  }
  return [...byTerms.values()];
}

/** What a hit's snippet marks of a query word: its spellings, and its folded form where that is looked for. */
const snippetExpressions = (word: string): string[] => {
  const { folded } = foldedLookup(word.normalize("NFC"));
  return [...ftsSpellings(word).map(quoted), ...(folded === null ? [] : [folded])];
};

export interface SearchOptions {
  conversationId?: string;
  kinds?: readonly DocKind[];
  /** Only documents whose ref id starts with this (e.g. one attachment's pages: "att_…:"). */
  refPrefix?: string;
  /** Whose words are sought; unset: the person's, unless the query asks for the assistant's. */
  said?: "user" | "assistant";
  /**
   * Leave out refused turns' messages (REFUSED_ROLE_PREFIX): set for the model's searches, whose
   * results go back to it; a person's search (GET /v1/search) finds them.
   */
  withoutRefused?: boolean;
  limit: number;
  /** The semantic path's fusion (services/semantic/select.ts cortexFusionFor); unset: lexical only. */
  fusion?: CortexFusion;
}

/** What a fused page is built from: the shard, the tenant, the query and its filters, where the page starts, and the lexical ranking. */
export interface FusionRequest {
  db: ShardDatabase;
  tenantId: string;
  q: string;
  opts: SearchOptions;
  offset: number;
  /** The lexical ranking's top `count`, from its first hit. */
  lexical: (count: number) => Promise<SearchHit[]>;
}

/** The semantic path's side of a search: one page fused from the lexical ranking and its own. */
export interface CortexFusion {
  page(request: FusionRequest): Promise<{ hits: SearchHit[]; next: SearchCursor | null }>;
}

/** Where a later page of a search starts: how many hits came before. */
export interface SearchCursor {
  offset: number;
}

/** One page of a search: the query text, its filters, and where the page starts. */
export interface SearchRequest extends SearchOptions {
  q: string;
  cursor?: SearchCursor;
}

/**
 * One page of the cortex's BM25 ranking over the subject terms, one hit per document; `next`
 * continues it exactly (ties are ordered by doc id).
 * Any scored word matches (a question in words rarely has all its words in the turn it means;
 * BM25 already ranks documents holding more of them higher); the scored words are the question's
 * 16 rarest, less the tenant's everyday words unless one is the rarest (term-stats.ts). Each
 * word's idf counts the tenant's own rows plus a fixed background's, so other tenants in the
 * shard move no weight (bm25's length normalization still uses the shard's average). An assistant
 * message's score is discounted (core/speaker-weight) so a reply restating a person's words does
 * not push other evidence out, and a message among the first hits is lifted by its conversation's
 * best other hit (term-stats.ts CONVERSATION_LIFT).
 * The whole ranking is one SQL order, so a paged walk is the one-page ranking.
 */
export async function searchCortexPage(
  db: ShardDatabase,
  tenantId: string,
  request: SearchRequest,
): Promise<{ hits: SearchHit[]; next: SearchCursor | null }> {
  const { q, ...opts } = request;
  const words = queryWords(q);
  if (!words) return { hits: [], next: null };
  const offset = opts.cursor?.offset ?? 0;
  const assistant = assistantWeight(q, opts.said);
  // ── Semantic fusion hook: with a semantic path on, the page is the reciprocal-rank fusion of this
  // lexical ranking and the vector ranking (services/semantic/fusion.ts). ──
  if (opts.fusion)
    return opts.fusion.page({
      db,
      tenantId,
      q,
      opts,
      offset,
      lexical: (count) => runSearch(db, { tenantId, words, assistant, opts, offset: 0, count }),
    });
  const ranked = await runSearch(db, { tenantId, words, assistant, opts, offset, count: opts.limit + 1 });
  const hits = ranked.slice(0, opts.limit);
  return { hits, next: ranked.length > opts.limit ? { offset: offset + opts.limit } : null };
}

/**
 * Whether the conversation lift (term-stats.ts CONVERSATION_LIFT) applies to a search: it moves
 * conversations' messages relative to each other, so not within one conversation (which then ranks
 * its messages, pages and episodes as before), nor where no message can be a hit.
 */
const lifted = (opts: SearchOptions) =>
  !opts.conversationId && !opts.refPrefix && (!opts.kinds?.length || opts.kinds.includes("message"));

/** What one ranking run reads: the tenant's documents for `words`, the assistant's factor, filters, a window. */
interface RankingRun {
  tenantId: string;
  words: readonly string[];
  assistant: number;
  opts: SearchOptions;
  offset: number;
  count: number;
}

/**
 * A hex digit's value plus one: `instr` on this string. SQLite has no blob-to-integer cast, so a
 * byte of the averages record is read as two hex digits.
 */
const HEX = `'0123456789ABCDEF'`;
const hexByte = (k: string) =>
  `((instr(${HEX}, substr(a.h, 2 * ${k} + 1, 1)) - 1) * 16 + instr(${HEX}, substr(a.h, 2 * ${k} + 2, 1)) - 1)`;

/**
 * Documents ranked `offset` to `offset + count`, with their snippets, in one statement: one call
 * to the shard (or its replica) per search, however many words the question has.
 *
 * The statement's parts, in order:
 * - `a`, `fts_rows`: FTS5's row count, the varint heading its averages record (the `_data` row
 *   with id 1; term-stats.ts fts5RowCount reads the same bytes in JS): seven bits a byte, the high
 *   bit meaning "more", the ninth byte whole.
 * - `r`: the tenant's rowid range in its shard (d1-migrations/cortex-shard/0003_tenant_fts.sql).
 *   An FTS5 scan constrained to `rowid BETWEEN lo AND hi` seeks to the tenant's rows in each word's
 *   doclist and counts and scores only them; `d.tenant_id` stays as the guard.
 * - `tenant_counts`, `blended`, `kept`: how many of the tenant's rows each word matches, each
 *   word's blended idf (those counts plus the background's, which come in with the words), and the
 *   MAX_QUERY_WORDS rarest of the words the tenant's rows hold, the only ones scored, less the
 *   tenant's everyday words unless one is the rarest (COMMON_WORD_SHARE; term-stats.ts says why for
 *   both; a word no row holds scores nothing, so it takes no place). The tenant's
 *   count is of the rows in its range, without reading cortex_docs: a range holds only its
 *   tenant's rows (the insert trigger of 0003 puts every row in its tenant's range), and a count
 *   moves a weight, never what a search may return, which `scored` guards by tenant_id.
 *   MATERIALIZED: each count is taken once.
 * - `w`: each kept word's weight on its own bm25 (term-stats.ts tenantPhraseWeights, which the SQL
 *   follows term by term): FTS5's idf, which the factor cancels, counts the whole shard (its row
 *   count and how many rows each kept word matches); the blended idf, squared, takes its place,
 *   so a ranking does not depend on which other tenants share the shard. A one-word search is
 *   weighted too, so every score is on the blended scale.
 * - `h`: each word's bm25 alone (one FTS5 scan per row of `w`, inside the tenant's rowid range),
 *   weighted. Summed per row that is FTS5's OR-query score with the blended idf. The words are rows
 *   of one JSON parameter, not a UNION: SQLite caps a compound SELECT at a few terms, and a question
 *   has up to 64 words (MAX_SEARCH_TERMS; 16 of them scored). MATERIALIZED: bm25() only works while FTS5 scans, not once rows are sorted.
 * - `scored`, `candidates`, `best`: chunk scores (an assistant message's discounted), the best
 *   `chunks` of them (a top-N sort, not a sort of every match), then each document's best chunk
 *   among those: a document's chunks collapse to one hit. Its first rows' order is the whole
 *   ranking's, so the ranking is exact as far as the candidates hold documents, or wholly when
 *   every match was a candidate (runSearch).
 * - `docs`, `lifted`: the conversation lift (term-stats.ts CONVERSATION_LIFT): each message among
 *   the first CONVERSATION_POOL documents gains that fraction of the best score of another message
 *   of its conversation among them (the conversation's first gains its second's); a pool of 0
 *   where the lift does not apply (`lifted`: a search within one conversation, or of no messages). A lift only
 *   makes a score better, so the pool stays ahead of every document past it and one ORDER BY is
 *   still the whole ranking; runSearch widens the candidates until they hold the pool.
 * - the page, and a snippet for each of its hits only, from the chunk that ranked, its matches
 *   marked MATCH_OPEN/MATCH_CLOSE (runSearch cuts it, then marks them `[match]`), and the start of
 *   a chunk with CJK terms, shown where its snippet marks no match (shownSnippet); joined onto
 *   the candidates' and documents' counts, so even an empty page says whether they ran out.
 * Equal scores (the same words as often in as long a text: a repeated question, a regenerate's
 * copy of its prompt) put the newer document first (BY_RANK), then the doc_id, so paging is stable.
 */
/** The ranking's order: the score (lower is better, as bm25's), then the newer document, then doc_id. */
const BY_RANK = "score, createdAt DESC, docId";

function rankingStatement(run: RankingRun, chunks: number): { sql: string; params: unknown[] } {
  const { tenantId, words, assistant, opts, offset, count } = run;
  const background = shippedBackground();
  const params: unknown[] = [];
  const p = (value: unknown) => `?${params.push(value)}`;
  const tenant = p(tenantId);
  const filters: string[] = [];
  if (opts.conversationId) filters.push(`AND d.conversation_id = ${p(opts.conversationId)}`);
  // ref ids never contain LIKE wildcards (ids and ":" only), so a plain prefix pattern is exact.
  if (opts.refPrefix) filters.push(`AND d.ref_id LIKE ${p(`${opts.refPrefix}%`)}`);
  if (opts.kinds?.length) filters.push(`AND d.kind IN (${opts.kinds.map((k) => p(k)).join(", ")})`);
  if (opts.withoutRefused) filters.push(`AND ${NOT_REFUSED}`);
  // The same window twice, marked and not (hitSnippet tells FTS5's marks from the text's own). The
  // words as written only: a CJK word's bigrams match in the row's terms, past its body's tokens,
  // and a window chosen there would show the body's end, unmarked (runSearch shows its start).
  // A word's folded form too (foldedLookup), which a text written without its diacritics holds.
  // A cut word's spellings mark other words of its pieces too ("दाल" marks "दिल"): they place the
  // window, and runSearch unmarks those (hitSnippet's words).
  const match = p(words.flatMap(snippetExpressions).join(" OR "));
  const sql = `WITH RECURSIVE
    a(h) AS (SELECT hex(substr(block, 1, 9)) FROM cortex_fts_data WHERE id = 1),
    varint(k, n, done) AS (
      SELECT 0, 0, 0
      UNION ALL
      SELECT k + 1, CASE WHEN k = 8 THEN n * 256 + ${hexByte("k")} ELSE n * 128 + (${hexByte("k")} & 127) END,
             k = 8 OR ${hexByte("k")} < 128
      FROM varint, a WHERE NOT done
    ),
    fts_rows(n) AS (SELECT n FROM varint WHERE done),
    r(lo, hi) AS (SELECT base, base + 4294967295 FROM cortex_tenant_ranges WHERE tenant_id = ${tenant}),
    tenant_rows(n) AS (SELECT count(*) FROM cortex_docs WHERE tenant_id = ${tenant}),
    words(phrase, background) AS (SELECT value ->> 0, value ->> 1 FROM json_each(${p(JSON.stringify(words.map((word) => [ftsPhrase(word), background.hits(word.normalize("NFC"))])))})),
    tenant_counts(phrase, background, hits) AS MATERIALIZED (
      SELECT words.phrase, words.background,
             (SELECT count(*) FROM r CROSS JOIN cortex_fts ON cortex_fts MATCH words.phrase AND cortex_fts.rowid BETWEEN r.lo AND r.hi)
      FROM words
    ),
    blended(phrase, idf, hits, n) AS (
      SELECT c.phrase, ln(1 + (t.n + ${p(background.documents)} - (c.hits + c.background) + 0.5) / (c.hits + c.background + 0.5)),
             c.hits, t.n
      FROM tenant_counts c CROSS JOIN tenant_rows t WHERE c.hits > 0
    ),
    kept(phrase, idf, shard_hits) AS MATERIALIZED (
      SELECT phrase, idf, (SELECT count(*) FROM cortex_fts WHERE cortex_fts MATCH phrase)
      FROM (SELECT *, rank() OVER (ORDER BY idf DESC) AS place FROM blended)
      WHERE place <= ${p(MAX_QUERY_WORDS)}
        AND (place = 1 OR hits <= max(n * ${p(COMMON_WORD_SHARE)}, ${p(COMMON_WORD_ROWS)}))
    ),
    w(phrase, weight) AS MATERIALIZED (
      SELECT k.phrase,
             CASE WHEN f.n IS NULL THEN 1 ELSE
               pow(k.idf, ${p(IDF_EXPONENT)})
               / (CASE WHEN ln((f.n - k.shard_hits + 0.5) / (k.shard_hits + 0.5)) > 0 THEN ln((f.n - k.shard_hits + 0.5) / (k.shard_hits + 0.5)) ELSE 1e-6 END)
             END
      FROM kept k LEFT JOIN fts_rows f
    ),
    h AS MATERIALIZED (
      SELECT cortex_fts.rowid AS rowid, bm25(cortex_fts) * w.weight AS s
      FROM w CROSS JOIN r CROSS JOIN cortex_fts ON cortex_fts MATCH w.phrase AND cortex_fts.rowid BETWEEN r.lo AND r.hi
    ),
    scored AS (
      SELECT h.rowid AS chunk, d.doc_id AS docId, d.kind AS kind, d.ref_id AS id, d.conversation_id AS conversationId,
             d.seq AS seq, ${HIT_ROLE} AS role, ${HIT_FROM}, d.created_at AS createdAt,
             SUM(h.s) * (CASE WHEN d.kind = 'message' AND ${BARE_ROLE} IN ('assistant', '${TOOL_ROLE}') THEN ${p(assistant)} ELSE 1 END) AS score
      FROM h JOIN cortex_docs d ON d.rowid = h.rowid
      WHERE d.tenant_id = ${tenant} ${filters.join(" ")}
      GROUP BY h.rowid
    ),
    candidates AS MATERIALIZED (SELECT * FROM scored ORDER BY ${BY_RANK} LIMIT ${p(chunks)}),
    best AS (SELECT *, row_number() OVER (PARTITION BY kind, id ORDER BY score, docId) AS nth FROM candidates),
    docs AS MATERIALIZED (
      SELECT *, (kind = 'message' AND conversationId IS NOT NULL AND row_number() OVER (ORDER BY ${BY_RANK}) <= ${p(lifted(opts) ? CONVERSATION_POOL : 0)}) AS pooled
      FROM best WHERE nth = 1
    ),
    lifted AS (
      SELECT chunk, docId, kind, id, conversationId, seq, role, "from", createdAt,
             score + CASE WHEN pooled THEN ${p(CONVERSATION_LIFT)} * coalesce(
               CASE WHEN row_number() OVER conv = 1 THEN nth_value(score, 2) OVER whole ELSE first_value(score) OVER whole END, 0)
             ELSE 0 END AS score
      FROM docs
      WINDOW conv AS (PARTITION BY pooled, conversationId ORDER BY ${BY_RANK}),
             whole AS (conv ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    ),
    page AS (SELECT * FROM lifted ORDER BY ${BY_RANK} LIMIT ${p(count)} OFFSET ${p(offset)})
  SELECT c.n AS candidates, (SELECT count(*) FROM docs) AS documents,
         page.kind, page.id, page.conversationId, page.seq, page.role, page."from", page.createdAt, page.score,
         (SELECT snippet(cortex_fts, 0, ${p(MATCH_OPEN)}, ${p(MATCH_CLOSE)}, '…', 24) FROM cortex_fts
           WHERE cortex_fts MATCH ${match} AND cortex_fts.rowid = page.chunk) AS snippet,
         (SELECT snippet(cortex_fts, 0, '', '', '…', 24) FROM cortex_fts
           WHERE cortex_fts MATCH ${match} AND cortex_fts.rowid = page.chunk) AS plain,
         (SELECT CASE WHEN terms IS NOT NULL THEN substr(body, 1, ${p(SNIPPET_CHARS + 1)}) END FROM cortex_docs
           WHERE rowid = page.chunk) AS head
  FROM (SELECT count(*) AS n FROM candidates) c LEFT JOIN page ORDER BY page.score, page.createdAt DESC, page.docId`;
  return { sql, params };
}

/** A hit as the ranking statement answers it, with how many chunk rows were candidates. */
type RankedRow = Omit<SearchHit, "messageId" | "snippet"> & {
  snippet: string | null;
  plain: string | null;
  /** The start of a chunk with CJK terms (one character more than a snippet shows), else null. */
  head: string | null;
  candidates: number;
  documents: number;
};

/**
 * Documents ranked `offset` to `offset + count`, each with its snippet (rankingStatement). The
 * statement collapses the best `chunks` chunk rows to documents; a document's chunks rank apart,
 * so when those rows hold too few documents (long texts matching in many chunks) it runs again
 * over four times as many. Most texts are one chunk: one run, one call to the shard.
 */
async function runSearch(db: ShardDatabase, run: RankingRun): Promise<SearchHit[]> {
  const wanted = Math.max(run.offset + run.count, lifted(run.opts) ? CONVERSATION_POOL : 0);
  for (let chunks = wanted * 3; ; chunks *= 4) {
    const { sql, params } = rankingStatement(run, chunks);
    const { results } = await db
      .prepare(sql)
      .bind(...params)
      .all<RankedRow | { candidates: number; documents: number; id: null }>();
    // One row at least: the candidates' counts, with the page's hits (none: a row without a hit).
    const hits = results.filter((h): h is RankedRow => h.id !== null);
    // The page is exact when the candidates hold the first `wanted` documents (the conversation
    // lift's pool and the page), or when every matching chunk was a candidate.
    if ((results[0]?.documents ?? 0) >= wanted || (results[0]?.candidates ?? 0) < chunks)
      return hits.map(({ candidates: _, documents: __, plain, head, ...h }) => ({
        ...h,
        ...shownSnippet({ marked: h.snippet, plain, head }, run.words),
        messageId: h.kind === "message" ? h.id : null,
      }));
  }
}

/**
 * The snippet a hit shows (hitSnippet): FTS5's, or, for a chunk with CJK terms where it marks no
 * match (found through the bigrams alone, or its window past the body's tokens, or marking only
 * other words of a query word's pieces), the chunk's start.
 */
function shownSnippet(
  row: { marked: string | null; plain: string | null; head: string | null },
  words: readonly string[],
): { snippet: string; matches: [number, number][] } {
  const { marked, plain, head } = row;
  if (head !== null && (marked === null || marked === plain)) return hitSnippet(head, head);
  const shown = hitSnippet(marked ?? "", plain, words);
  return head !== null && !shown.matches.length ? hitSnippet(head, head) : shown;
}

export const pageRef = (attachmentId: string, page: number) => `${attachmentId}:p${String(page).padStart(6, "0")}`;

/** Ref ids of an attachment's pages match this LIKE pattern (see pageRef). */
export const pageRefPattern = (attachmentId: string) => `${attachmentId}:p%`;

/** Pages of one attachment already in the cortex (idempotent progress: re-indexing counts once). */
export async function countIndexedPages(db: ShardDatabase, tenantId: string, attachmentId: string): Promise<number> {
  const row = await db
    .prepare(
      `SELECT COUNT(DISTINCT ref_id) AS n FROM cortex_docs WHERE tenant_id = ? AND kind = 'page' AND ref_id LIKE ?`,
    )
    .bind(tenantId, `${attachmentId}:p%`)
    .first<{ n: number }>();
  return row?.n ?? 0;
}
