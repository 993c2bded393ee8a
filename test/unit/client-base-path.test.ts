// The typed client under a base URL with a path (an API hosted behind a prefix): every route's
// path, and the socket's URL, keep the prefix, with or without a trailing slash.
import { describe, expect, it } from "vitest";
import { createClient } from "../../client";

function recording(baseUrl: string) {
  const urls: string[] = [];
  const api = createClient({
    baseUrl,
    key: "k",
    fetch: (async (url: string) => {
      urls.push(String(url));
      return Response.json({ data: [], next: null });
    }) as typeof fetch,
    webSocket: async (url) => {
      urls.push(url);
      throw new Error("no socket here");
    },
  });
  return { api, urls };
}

describe("a baseUrl with a path", () => {
  for (const baseUrl of ["https://host.test/api/", "https://host.test/api"])
    it(`keeps the prefix of ${baseUrl} (HTTP and socket)`, async () => {
      const { api, urls } = recording(baseUrl);
      await api.request("GET /v1/conversations", { query: { limit: 5 } });
      expect(urls.at(-1)).toBe("https://host.test/api/v1/conversations?limit=5");
      expect(api.url("/v1/conversations/c%201")).toBe("https://host.test/api/v1/conversations/c%201");
      await api.socket("c1", { after: 0 }).catch(() => {});
      expect(urls.at(-1)).toBe("wss://host.test/api/v1/conversations/c1/ws?after=0");
    });

  it("a bare origin still works", async () => {
    const { api, urls } = recording("http://127.0.0.1:8787");
    await api.request("GET /v1/conversations");
    expect(urls.at(-1)).toBe("http://127.0.0.1:8787/v1/conversations");
  });
});
