// /v1/memory: the tenant's durable notes (create, list, get, patch, delete) and, read-only, the
// episodes that folds record.
import { Hono } from "hono";
import { z } from "zod";
import { nonBlankText } from "../../../core/blank-text";
import { isId } from "../../../core/ids";
import { ApiError, notFound } from "../errors";
import {
  createNote,
  deleteNote,
  getEpisode,
  getNote,
  listEpisodes,
  listNotes,
  MAX_NOTES,
  NoteLimitReached,
  updateNote,
} from "../../../services/memory/notes";
import { noteTags } from "../../../services/memory/note-tags";
import type { AppEnv } from "../types";
import { idCursor, listBody, pageOf } from "../paging";
import { intParam, jsonBody, query, visibleName } from "../validate";
import { cortexBookmarkAnswer, doc } from "../openapi/registry";
import { errorSchema, listOf, resource } from "../openapi/schemas";
import { answerCortexBookmark } from "./search";

const note = resource("Note", "A durable memory note.");
const episode = resource("Episode", "What one fold recorded of a conversation.");

export const memoryRoutes = new Hono<AppEnv>();

// A note's text reaches the model (memory_get, memory_search): never blank, as the API refuses blank text.
const noteText = nonBlankText(20_000, { trim: true });
// A note's title is a name people read in lists and the memory map may quote: the rule of project
// names and conversation titles (something visible, no controls or bidi overrides).
const createBody = z.strictObject({
  text: noteText,
  title: visibleName.optional(),
  tags: noteTags.optional(),
});
const patchBody = z
  .strictObject({
    text: noteText.optional(),
    title: visibleName.optional(),
    tags: noteTags.optional(),
  })
  .refine((b) => b.text !== undefined || b.title !== undefined || b.tags !== undefined, "give text, title or tags");
const listQuery = z.strictObject({
  limit: intParam(1, 100).default(20),
  cursor: z
    .string()
    .refine((v) => isId("mem", v), "not a note id")
    .optional(),
});
const episodesQuery = z.strictObject({
  limit: intParam(1, 100).default(20),
  cursor: idCursor("epi", "an episode id"),
  conversation: z
    .string()
    .refine((v) => isId("conv", v), "not a conversation id")
    .optional(),
});

const noteId = (id: string) => {
  if (!isId("mem", id)) throw notFound("note");
  return id;
};

memoryRoutes.post(
  "/",
  doc({
    summary: "Create a note",
    responses: { 201: { description: "Created", schema: note, headers: cortexBookmarkAnswer } },
  }),
  ...jsonBody(createBody),
  async (c) => {
    try {
      const { note, written } = await createNote(c.env, c.get("tenantId"), c.req.valid("json"));
      answerCortexBookmark(c, written);
      return c.json(note, 201);
    } catch (err) {
      if (err instanceof NoteLimitReached)
        throw new ApiError(
          409,
          "conflict",
          `the tenant has ${MAX_NOTES} notes, the most it may keep; delete one before creating another`,
        );
      throw err;
    }
  },
);

memoryRoutes.get(
  "/",
  doc({ summary: "List notes", responses: { 200: { description: "A page", schema: listOf(note) } } }),
  query(listQuery),
  async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const notes = await listNotes(c.env.DB, { tenantId: c.get("tenantId"), limit: limit + 1, before: cursor });
    return c.json(listBody(pageOf(notes, limit, (n) => n.id)));
  },
);

memoryRoutes.get(
  "/episodes",
  doc({
    summary: "List episodes (what folds recorded)",
    responses: { 200: { description: "A page", schema: listOf(episode) } },
  }),
  query(episodesQuery),
  async (c) => {
    const { limit, conversation, cursor } = c.req.valid("query");
    const rows = await listEpisodes(c.env.DB, {
      tenantId: c.get("tenantId"),
      limit: limit + 1,
      conversationId: conversation,
      before: cursor,
    });
    return c.json(
      listBody(
        pageOf(
          rows.map(({ tenantId: _t, ...e }) => e),
          limit,
          (e) => e.id,
        ),
      ),
    );
  },
);

memoryRoutes.get(
  "/episodes/:id",
  doc({ summary: "Get an episode", responses: { 200: { description: "The episode", schema: episode } } }),
  async (c) => {
    const id = c.req.param("id");
    const e = isId("epi", id) ? await getEpisode(c.env.DB, c.get("tenantId"), id) : null;
    if (!e) throw notFound("episode");
    const { tenantId: _t, ...episode } = e;
    return c.json(episode);
  },
);

memoryRoutes.get(
  "/:id",
  doc({ summary: "Get a note", responses: { 200: { description: "The note", schema: note } } }),
  async (c) => {
    const note = await getNote(c.env.DB, c.get("tenantId"), noteId(c.req.param("id")));
    if (!note) throw notFound("note");
    return c.json(note);
  },
);

memoryRoutes.patch(
  "/:id",
  doc({
    summary: "Change a note",
    responses: {
      200: { description: "The note", schema: note, headers: cortexBookmarkAnswer },
      404: {
        description: "No such note (a delete that landed meanwhile: its x-cortex-bookmark)",
        schema: errorSchema,
        headers: cortexBookmarkAnswer,
      },
    },
  }),
  ...jsonBody(patchBody),
  async (c) => {
    const { note, written } = await updateNote(c.env, {
      tenantId: c.get("tenantId"),
      id: noteId(c.req.param("id")),
      change: c.req.valid("json"),
    });
    // Also on a 404 (a delete landed meanwhile): its document went in this write.
    answerCortexBookmark(c, written);
    if (!note) throw notFound("note");
    return c.json(note);
  },
);

memoryRoutes.delete(
  "/:id",
  doc({
    summary: "Delete a note",
    responses: {
      204: { description: "Deleted", headers: cortexBookmarkAnswer },
      404: {
        description: "No such note (one a cut-short write left in the index is cleared: its x-cortex-bookmark)",
        schema: errorSchema,
        headers: cortexBookmarkAnswer,
      },
    },
  }),
  async (c) => {
    const { deleted, written } = await deleteNote(c.env, c.get("tenantId"), noteId(c.req.param("id")));
    // Also on a 404 that cleared a document a cut-short write left.
    answerCortexBookmark(c, written);
    if (!deleted) throw notFound("note");
    return c.body(null, 204);
  },
);
