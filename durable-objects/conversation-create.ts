// Creating a conversation: the D1 listing row, then the Durable Object (which writes the R2
// head). If the object cannot be created the row is removed again, so a failure leaves neither
// half behind. Used by the conversations route and by channels. A location hint places the new
// object near whoever created it; it is given here only, as it counts on the first get() of a new
// id alone (every later get() finds the object where it was made, and a hint there is ignored).
//
// A create with an Idempotency-Key writes the key's D1 row in the listing row's batch, so the
// unique (tenant, key) decides between concurrent creates and a loser writes nothing; a retry, or
// the loser, answers the conversation the key made as it is now (keyedConversation).
import { sortableId } from "../core/ids";
import type { SettingsPatch } from "../core/settings";
import { DEFAULT_TITLE } from "../core/title";
import { inheritedSettings, settingsFromLayers } from "../services/default-settings";
import type { ConversationView } from "../services/record/conversation-head";
import {
  conversationRowExists,
  type ConversationRow,
  type CreateKey,
  deleteConversationRow,
  deleteKeyedConversationRow,
  insertConversationRow,
  insertKeyedConversationRow,
  readCreateKey,
} from "../services/conversation-list";
import type { StagedImport } from "../services/transfer/import-staging";
import { withLocationHint, type LocationHint } from "../core/location-hint";

/**
 * What a create key already used answers: its conversation as it is now; `reused` when it came
 * with another request; `deleted` when its conversation is gone; `pending` while the create that
 * holds the key has not finished (or its conversation is being deleted).
 */
export type KeyedCreate =
  | { kind: "replayed"; view: ConversationView }
  | { kind: "reused" }
  | { kind: "deleted"; conversationId: string }
  | { kind: "pending" };

/** A new conversation, or the settings problem that refused it before anything was written. */
export type CreatedConversation = { kind: "created"; view: ConversationView } | { kind: "invalid"; message: string };

/**
 * An import deleted while its object committed the transcript (a DELETE that found it listed): its
 * purge removed all of it, the listing row too. A key it was created with keeps naming it, so a
 * retry is told it was deleted (as `KeyedCreate`'s `deleted`) rather than importing it again.
 */
export type DeletedImport = { kind: "deleted"; conversationId: string };

/** How long a retry waits, in steps, for the object of a create still under way to have its head. */
const PENDING_WAITS_MS = [50, 100, 200, 400, 800];

/** What a create key the tenant used within IDEMPOTENCY_TTL_MS answers; null when it is free. */
export async function keyedConversation(env: Env, tenantId: string, createKey: CreateKey): Promise<KeyedCreate | null> {
  const row = await readCreateKey(env.DB, { tenantId, key: createKey.key });
  if (!row) return null;
  if (row.fingerprint !== createKey.fingerprint) return { kind: "reused" };
  const ref = { tenantId, conversationId: row.conversationId };
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(ref.conversationId));
  for (let step = 0; ; step++) {
    const view = await stub.getMeta(ref);
    if (view) return { kind: "replayed", view };
    // The key's row and the listing row are written together, so a listing without the row is a
    // purged conversation, unless the create that held the key failed and let go of both since.
    if (!(await conversationRowExists(env.DB, ref))) {
      const still = await readCreateKey(env.DB, { tenantId, key: createKey.key });
      return still?.conversationId === ref.conversationId
        ? { kind: "deleted", conversationId: ref.conversationId }
        : null;
    }
    // Listed, no head yet: the winning create is writing it (or a delete has begun and not purged).
    if (step >= PENDING_WAITS_MS.length) return { kind: "pending" };
    await new Promise((r) => setTimeout(r, PENDING_WAITS_MS[step]));
  }
}

/** What a create is asked for. */
export interface CreateRequest {
  tenantId: string;
  init: {
    title?: string;
    settings?: SettingsPatch;
    projectId?: string;
    /** The title when none is given ("New conversation" unless said: an import's differs). */
    untitledAs?: string;
  };
  /** An import's transcript, written before the head. */
  staged?: StagedImport;
  locationHint?: LocationHint | null;
}

/** How the listing row goes in and, if the object cannot be made, out again. */
interface Listing<Lost> {
  /** Writes the row; what the create answers instead when the row may not be written. */
  insert(row: ConversationRow): Promise<Lost | null>;
  remove(id: string): Promise<void>;
}

/** A create; an import's (`staged`) may also answer `deleted` (DeletedImport), a plain create never. */
export function createConversation(
  env: Env,
  request: CreateRequest & { staged?: undefined },
): Promise<CreatedConversation>;
export function createConversation(env: Env, request: CreateRequest): Promise<CreatedConversation | DeletedImport>;
export function createConversation(env: Env, request: CreateRequest): Promise<CreatedConversation | DeletedImport> {
  return create<never>(env, request, {
    insert: async (row) => {
      await insertConversationRow(env.DB, row);
      return null;
    },
    remove: (id) => deleteConversationRow(env.DB, id),
  });
}

/**
 * A create with an Idempotency-Key the caller found free (keyedConversation). A concurrent create
 * that took the key first is the answer instead: its conversation (a key let go of since, by a
 * create that failed, is a `pending` to retry).
 */
export function createKeyedConversation(
  env: Env,
  request: CreateRequest & { createKey: CreateKey },
): Promise<CreatedConversation | KeyedCreate> {
  const { tenantId, createKey } = request;
  return create<KeyedCreate>(env, request, {
    insert: async (row) =>
      (await insertKeyedConversationRow(env.DB, row, createKey))
        ? null
        : ((await keyedConversation(env, tenantId, createKey)) ?? { kind: "pending" }),
    remove: (id) => deleteKeyedConversationRow(env.DB, { tenantId, key: createKey.key, conversationId: id }),
  });
}

async function create<Lost>(
  env: Env,
  request: CreateRequest,
  listing: Listing<Lost>,
): Promise<CreatedConversation | DeletedImport | Lost> {
  const { tenantId, init, staged, locationHint } = request;
  // The tenant's settings, then the project's, then the request's, each layer over the one below
  // (a layer naming a model gets its figures): the path the project routes check a project on.
  const inherited = await inheritedSettings(env.DB, tenantId, init.projectId);
  // The project was checked before (the route's 400), and deleted since: refused alike, before
  // anything is written, rather than made without its settings in a project that is gone.
  if (!inherited) return { kind: "invalid", message: "projectId: no such project" };
  const made = await settingsFromLayers(env, { ...inherited, request: init.settings ?? {} });
  if (!made.ok) return { kind: "invalid", message: made.message };
  const settings = made.settings;
  const id = sortableId("conv");
  const now = new Date().toISOString();
  const title = init.title ?? init.untitledAs ?? DEFAULT_TITLE;
  // An import's row counts its transcript from the start: a listing read at the import's bookmark
  // shows it whole, before the object's outbox refreshes the row (to the same count, and `updatedAt`
  // to the import's moment, an instant after this one).
  const messageCount = staged?.messages ?? 0;
  const lost = await listing.insert({ id, tenantId, title, createdAt: now, updatedAt: now, messageCount });
  if (lost !== null) return lost;
  try {
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id), withLocationHint(locationHint));
    const ref = { tenantId, conversationId: id };
    // A title the caller gave is theirs, whatever it says ("New conversation" too): the automatic
    // title leaves it alone, as it does a PATCH title. An import's `?title=` likewise.
    const titledByUser = init.title !== undefined;
    // An import brings its transcript: the object writes it before its head (see transcript-import.ts).
    if (staged) {
      const made = await stub.importTranscript(ref, { title, settings, titledByUser }, staged);
      return made.kind === "created" ? { kind: "created", view: made.view } : { kind: "deleted", conversationId: id };
    }
    return {
      kind: "created",
      view: await stub.create(ref, { title, settings, projectId: init.projectId ?? null, titledByUser }),
    };
  } catch (err) {
    await listing.remove(id);
    throw err;
  }
}
