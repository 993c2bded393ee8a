// The cortex's local semantic path through the fusion hook, on a real cortex shard (a D1
// database, CORTEX_SHARD_n, shared by many tenants): the vectors follow the
// documents (caught up at search time, forgotten on delete, re-embedded on change), stay within
// their tenant, and fusion finds what exact terms miss while identifiers stay on top.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deleteDocs, searchCortexPage, upsertDocs } from "../../services/cortex/search-index";
import { note } from "../cortex-docs";
import { catchUp } from "../../services/semantic/catch-up";
import { shardDatabase, shardNames } from "../../services/cortex/routing";
import { cortexFusionFor, semanticPathFor } from "../../services/semantic/select";

const local = { SEMANTIC_SEARCH: "local" };
let n = 0;
/** Runs `fn` on a real cortex shard (a D1 database, as cortexFor hands the cortex functions). */
const inShard = <T>(fn: (db: D1Database) => Promise<T>) => fn(shardDatabase(env, shardNames(env)[n++ % 2]));
const tenant = () => `ten_semantic${Date.now()}${n++}`;
const ids = async (db: D1Database, tenantId: string, q: string, withFusion: boolean, limit = 5) =>
  (
    await searchCortexPage(db, tenantId, { q, limit, fusion: withFusion ? cortexFusionFor(local, db) : undefined })
  ).hits.map((h) => h.id);
const vectorCount = async (db: D1Database, tenantId: string) =>
  (await db
    .prepare(`SELECT COUNT(*) AS n FROM local_vectors WHERE tenant_id = ?`)
    .bind(tenantId)
    .first<{ n: number }>())!.n;

describe("semantic path (local)", () => {
  it("is chosen by SEMANTIC_SEARCH and the bindings; lexical only by default", () => {
    const db = {} as D1Database;
    expect(semanticPathFor({}, db)).toBeNull();
    expect(semanticPathFor(local, db)?.mode).toBe("local");
    expect(semanticPathFor({ SEMANTIC_SEARCH: "off" }, db)).toBeNull();
  });

  it("fuses in what exact terms miss, and keeps an identifier's exact match first", async () => {
    await inShard(async (db) => {
      const t = tenant();
      await upsertDocs(db, [
        note(t, "colors", "The kitchen walls are now in bright colors."),
        note(t, "flight", "My flight to Denver leaves on Tuesday morning."),
        note(t, "invoice", "The invoice INV-20931 totals 318.40 EUR."),
        note(t, "invoice2", "Invoice totals: INV-20932 and INV-20933 are paid."),
      ]);
      // "colours" is not "colors" to the porter tokenizer: the lexical ranking alone finds nothing.
      expect(await ids(db, t, "which colours did I pick", false)).toEqual([]);
      expect((await ids(db, t, "which colours did I pick", true))[0]).toBe("colors");
      expect((await ids(db, t, "invoice INV-20931", true))[0]).toBe("invoice");
      expect(await vectorCount(db, t)).toBe(4);
    });
  });

  it("never returns another tenant's documents", async () => {
    await inShard(async (db) => {
      const [a, b] = [tenant(), tenant()];
      await upsertDocs(db, [
        note(a, "mine", "Weekend hike up the ridge trail."),
        note(b, "theirs", "Hiking boots and hikes on ridge trails."),
      ]);
      await catchUp({ db, path: semanticPathFor(local, db)!, tenantId: b });
      expect(await ids(db, a, "hikes ridge trails", true, 20)).toEqual(["mine"]);
      expect(await ids(db, b, "hikes ridge trails", true, 20)).toEqual(["theirs"]);
    });
  });

  it("forgets a deleted document's vector and re-embeds a changed one", async () => {
    await inShard(async (db) => {
      const t = tenant();
      await upsertDocs(db, [
        note(t, "gone", "Saxophone lessons on Thursdays."),
        note(t, "kept", "Guitar practice every evening."),
      ]);
      expect(await ids(db, t, "saxophonist", true)).toContain("gone");
      await deleteDocs(db, t, { kind: "memory", refId: "gone" });
      expect(await ids(db, t, "saxophonist", true)).not.toContain("gone");
      expect(await vectorCount(db, t)).toBe(1);
      // The shard hands a BLOB back as an ArrayBuffer: compare its bytes.
      const vectorBytes = async () => [
        ...new Uint8Array(
          (await db
            .prepare(`SELECT vector FROM local_vectors WHERE tenant_id = ?`)
            .bind(t)
            .first<{ vector: ArrayBuffer }>())!.vector,
        ),
      ];
      const before = await vectorBytes();
      await upsertDocs(db, [note(t, "kept", "Violin practice every evening.")]);
      expect(await ids(db, t, "violinist", true)).toEqual(["kept"]);
      const after = await vectorBytes();
      expect(after).toHaveLength(before.length);
      expect(after).not.toEqual(before);
    });
  });

  it("pages the fused ranking without repeats", async () => {
    await inShard(async (db) => {
      const t = tenant();
      await upsertDocs(
        db,
        Array.from({ length: 7 }, (_, i) => note(t, `n${i}`, `Garden note ${i}: tomatoes and gardening tools.`)),
      );
      const all = await ids(db, t, "gardening", true, 20);
      const walked: string[] = [];
      let cursor: { offset: number } | undefined;
      do {
        const page = await searchCortexPage(db, t, {
          q: "gardening",
          limit: 3,
          fusion: cortexFusionFor(local, db),
          cursor,
        });
        walked.push(...page.hits.map((h) => h.id));
        cursor = page.next ?? undefined;
      } while (cursor);
      expect(walked).toEqual(all);
      expect(all).toHaveLength(7);
    });
  });
});
