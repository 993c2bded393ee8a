// An import's title and the automatic title (docs/api-notes.md): a `?title=` is the caller's, kept
// whatever it says ("New conversation" and "Imported conversation" too), as a title given at POST
// /v1/conversations; without one the import is "Imported conversation", which counts as untitled, so
// its first turn titles it from the first exchange it holds (the imported one).
import { describe, expect, it } from "vitest";
import { api, eventually, inConversation, newTenant, send } from "./helpers";

const importJson = (body: string, key: string, query = "") =>
  api("POST", `/v1/conversations/import?${query}`, body, {
    key,
    raw: true,
    headers: { "content-type": "application/json" },
  });

const body = JSON.stringify({
  messages: [
    { role: "user", content: "Herons eat fish in shallow water" },
    { role: "assistant", content: "yes" },
  ],
});
const titleOf = async (id: string, key: string) =>
  (await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.title as string;
const titleSource = (id: string) => inConversation(id, (instance) => instance.store.titleSource());

describe("an import's title", () => {
  it.each(["New conversation", "Imported conversation"])(
    "given as ?title=%s, is the user's and outlasts the first turn",
    async (title) => {
      const key = await newTenant();
      const r = await importJson(body, key, `title=${encodeURIComponent(title)}`);
      expect(r.status).toBe(201);
      expect(r.json.title).toBe(title);
      // Marked in the head's own write, before any turn: the automatic title never takes it.
      expect(await titleSource(r.json.id)).toBe("user");
      expect((await send(r.json.id, "tell me more", key)).status).toBe(200);
      await new Promise((res) => setTimeout(res, 1000));
      expect(await titleSource(r.json.id)).toBe("user");
      expect(await titleOf(r.json.id, key)).toBe(title);
    },
  );

  it("not given, is 'Imported conversation' until the first turn titles it from the imported exchange", async () => {
    const key = await newTenant();
    const r = await importJson(body, key);
    expect(r.status).toBe(201);
    expect(r.json.title).toBe("Imported conversation");
    expect(await titleSource(r.json.id)).toBeNull();
    expect((await send(r.json.id, "tell me more", key)).status).toBe(200);
    // The offline model titles with the first six words of the first prompt.
    expect(
      await eventually(async () => {
        const t = await titleOf(r.json.id, key);
        return t === "Imported conversation" ? null : t;
      }),
    ).toBe("Herons eat fish in shallow water");
  });
});
