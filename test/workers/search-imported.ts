// The search tests' setup: user messages imported into a new conversation, and GET /v1/search.
import { expect } from "vitest";
import { api, eventually } from "./helpers";

export interface SearchHit {
  id: string;
  snippet: string;
  matches: [number, number][];
  score: number;
}

export const search = async (key: string, q: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}`, undefined, { key })).json as unknown as {
    data: SearchHit[];
    next: string | null;
  };

/** Imports `texts` as the user messages of a new conversation (each with a reply); their ids, once a search for `marker` finds the last. */
export async function indexed(key: string, texts: readonly string[], marker: string): Promise<string[]> {
  const conv = (await api("POST", "/v1/conversations", {}, { key })).json.id;
  const imported = await api(
    "POST",
    `/v1/conversations/${conv}/import`,
    {
      messages: texts.flatMap((text) => [
        { role: "user", text },
        { role: "assistant", text: "Noted." },
      ]),
    },
    { key },
  );
  expect(imported.status, JSON.stringify(imported.json)).toBeLessThan(300);
  const messages = imported.json.messages as { id: string; role: string }[];
  const ids = messages.filter((m) => m.role === "user").map((m) => String(m.id));
  await eventually(async () => (await search(key, marker)).data.some((h) => h.id === ids.at(-1)));
  return ids;
}
