// Creating a conversation: the D1 listing row, then the Durable Object (which writes the R2
// head). If the object cannot be created the row is removed again, so a failure leaves neither
// half behind. Used by the conversations route and by channels. A location hint places the new
// object near whoever created it; it is given here only, as it counts on the first get() of a new
// id alone (every later get() finds the object where it was made, and a hint there is ignored).
import { sortableId } from "../core/ids";
import type { SettingsPatch } from "../core/settings";
import { inheritedSettings, settingsFromLayers } from "../services/default-settings";
import type { ConversationView } from "../services/record/conversation-head";
import { deleteConversationRow, insertConversationRow } from "../services/conversation-list";
import type { StagedImport } from "../services/transfer/import-staging";
import { withLocationHint, type LocationHint } from "../core/location-hint";

/** A new conversation, or the settings problem that refused it before anything was written. */
export type CreatedConversation = { kind: "created"; view: ConversationView } | { kind: "invalid"; message: string };

export async function createConversation(
  env: Env,
  request: {
    tenantId: string;
    init: { title?: string; settings?: SettingsPatch; projectId?: string };
    /** An import's transcript, written before the head. */
    staged?: StagedImport;
    locationHint?: LocationHint | null;
  },
): Promise<CreatedConversation> {
  const { tenantId, init, staged, locationHint } = request;
  // The tenant's settings, then the project's, then the request's, each layer over the one below
  // (a layer naming a model gets its figures): the path the project routes check a project on.
  const inherited = await inheritedSettings(env.DB, tenantId, init.projectId);
  const made = await settingsFromLayers(env, { ...inherited, request: init.settings ?? {} });
  if (!made.ok) return { kind: "invalid", message: made.message };
  const settings = made.settings;
  const id = sortableId("conv");
  const now = new Date().toISOString();
  const title = init.title ?? "New conversation";
  await insertConversationRow(env.DB, { id, tenantId, title, createdAt: now, updatedAt: now, messageCount: 0 });
  try {
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id), withLocationHint(locationHint));
    const ref = { tenantId, conversationId: id };
    // An import brings its transcript: the object writes it before its head (see transcript-import.ts).
    if (staged) return { kind: "created", view: await stub.importTranscript(ref, { title, settings }, staged) };
    // A title the caller gave is theirs, whatever it says ("New conversation" too): the automatic
    // title leaves it alone, as it does a PATCH title.
    const titledByUser = init.title !== undefined;
    return {
      kind: "created",
      view: await stub.create(ref, { title, settings, projectId: init.projectId ?? null, titledByUser }),
    };
  } catch (err) {
    await deleteConversationRow(env.DB, id);
    throw err;
  }
}
