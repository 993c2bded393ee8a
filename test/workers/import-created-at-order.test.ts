// An imported message's createdAt is kept as the API writes one (toISOString: milliseconds, "Z"),
// whatever precision the transcript gave: the search orders equal scores by createdAt as text
// (services/cortex/search-index.ts BY_RANK), and "…00Z" sorts after "…00.500Z" though it is older.
import { expect, it } from "vitest";
import { api, importText, eventually, newTenant } from "./helpers";

async function importAt(key: string, createdAt: string) {
  const messages = [
    { role: "user", content: "the glimmerwort question", createdAt },
    { role: "assistant", content: "noted", createdAt },
  ];
  const r = await importText(JSON.stringify({ messages }), key);
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
}

it("equal scores put the newer imported message first, whatever precision its createdAt had", {
  timeout: 60_000,
}, async () => {
  const key = await newTenant();
  const older = await importAt(key, "2026-01-01T00:00:00Z");
  const newer = await importAt(key, "2026-01-01T00:00:00.500Z");
  const hits = await eventually(async () => {
    const data = (await api("GET", "/v1/search?q=glimmerwort", undefined, { key })).json.data;
    return data.length === 2 ? data : undefined;
  });
  expect(hits[0].score).toBe(hits[1].score);
  expect(hits.map((h) => h.conversationId)).toEqual([newer, older]);
  expect(hits.map((h) => h.createdAt)).toEqual(["2026-01-01T00:00:00.500Z", "2026-01-01T00:00:00.000Z"]);
  const messages = (await api("GET", `/v1/conversations/${older}/messages`, undefined, { key })).json.data as {
    createdAt: string;
  }[];
  expect(messages[0].createdAt).toBe("2026-01-01T00:00:00.000Z");
});
