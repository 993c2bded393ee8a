// A staged chunk whose R2 write landed but whose answer was lost (every try threw) is still the
// import's: a refused or failed staging removes it with the rest, so nothing is left in R2 without
// a marker the cron tick could find (services/transfer/import-staging.ts).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { stagedImportMarkerPrefix } from "../../r2-layout";
import { stageTranscript } from "../../services/transfer/import-staging";
import { r2KeysUnder } from "./helpers";

/** The bucket, but the write of chunk 1 stores its object and then throws, on every try. */
function losingSecondChunkAnswer(bucket: R2Bucket): R2Bucket {
  return new Proxy(bucket, {
    get(target, prop) {
      if (prop === "put")
        return async (key: string, value: string) => {
          const stored = await target.put(key, value);
          if (/\/0+1\.json$/.test(key)) throw new Error("R2 put: connection reset (answer lost)");
          return stored;
        };
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

describe("import staging whose write answered an error", () => {
  it("removes a chunk that landed though its every write threw, with the earlier chunks and the marker", async () => {
    const tenantId = `t-lost-answer-${crypto.randomUUID()}`;
    // 600 messages: chunk 0 (500) is written as it fills, chunk 1 (100) at the end.
    const messages = Array.from({ length: 300 }, (_, i) => [
      { role: "user", content: `q ${i}` },
      { role: "assistant", content: `a ${i}` },
    ]).flat();
    const body = new Blob([JSON.stringify({ messages })]).stream();
    await expect(
      stageTranscript(losingSecondChunkAnswer(env.BUCKET), { tenantId, body, format: "json" }),
    ).rejects.toThrow(/answer lost/);
    expect(await r2KeysUnder(`tenants/${tenantId}/`)).toEqual([]);
    expect((await r2KeysUnder(stagedImportMarkerPrefix)).filter((k) => k.endsWith(`/${tenantId}`))).toEqual([]);
  });
});
