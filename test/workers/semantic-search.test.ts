// The cortex's local semantic path through the fusion hook, on the real D1: the vectors follow the
// documents (caught up at search time, forgotten on delete, re-embedded on change), stay within
// their tenant, and fusion finds what exact terms miss while identifiers stay on top.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deleteDocs, searchCortexPage, upsertDocs, type CortexDoc } from "../../services/cortex";
import { catchUp } from "../../services/semantic/catch-up";
import { cortexFusionFor, semanticPathFor } from "../../services/semantic/select";

const local = { DB: env.DB, SEMANTIC_SEARCH: "local" };
const fusion = cortexFusionFor(local)!;
let n = 0;
const tenant = () => `ten_semantic${Date.now()}${n++}`;
const note = (tenantId: string, refId: string, body: string): CortexDoc => ({ tenantId, kind: "memory", refId, conversationId: null, seq: null, role: null, createdAt: "2026-01-01T00:00:00.000Z", body });
const ids = async (tenantId: string, q: string, withFusion: boolean, limit = 5) =>
  (await searchCortexPage(env.DB, tenantId, q, { limit, fusion: withFusion ? fusion : undefined })).hits.map((h) => h.id);
const vectorCount = async (tenantId: string) => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM local_vectors WHERE tenant_id = ?`).bind(tenantId).first<{ n: number }>())!.n;

describe("semantic path (local)", () => {
  it("is chosen by SEMANTIC_SEARCH and the bindings; lexical only by default", () => {
    expect(semanticPathFor({ DB: env.DB })).toBeNull();
    expect(semanticPathFor(local)?.mode).toBe("local");
    expect(semanticPathFor({ DB: env.DB, SEMANTIC_SEARCH: "off" })).toBeNull();
  });

  it("fuses in what exact terms miss, and keeps an identifier's exact match first", async () => {
    const t = tenant();
    await upsertDocs(env.DB, [
      note(t, "colors", "The kitchen walls are now in bright colors."),
      note(t, "flight", "My flight to Denver leaves on Tuesday morning."),
      note(t, "invoice", "The invoice INV-20931 totals 318.40 EUR."),
      note(t, "invoice2", "Invoice totals: INV-20932 and INV-20933 are paid."),
    ]);
    // "colours" is not "colors" to the porter tokenizer: the lexical ranking alone finds nothing.
    expect(await ids(t, "which colours did I pick", false)).toEqual([]);
    expect((await ids(t, "which colours did I pick", true))[0]).toBe("colors");
    expect((await ids(t, "invoice INV-20931", true))[0]).toBe("invoice");
    expect(await vectorCount(t)).toBe(4);
  });

  it("never returns another tenant's documents", async () => {
    const [a, b] = [tenant(), tenant()];
    await upsertDocs(env.DB, [note(a, "mine", "Weekend hike up the ridge trail."), note(b, "theirs", "Hiking boots and hikes on ridge trails.")]);
    await catchUp(env.DB, semanticPathFor(local)!, b);
    expect(await ids(a, "hikes ridge trails", true, 20)).toEqual(["mine"]);
    expect(await ids(b, "hikes ridge trails", true, 20)).toEqual(["theirs"]);
  });

  it("forgets a deleted document's vector and re-embeds a changed one", async () => {
    const t = tenant();
    await upsertDocs(env.DB, [note(t, "gone", "Saxophone lessons on Thursdays."), note(t, "kept", "Guitar practice every evening.")]);
    expect(await ids(t, "saxophonist", true)).toContain("gone");
    await deleteDocs(env.DB, t, "memory", "gone");
    expect(await ids(t, "saxophonist", true)).not.toContain("gone");
    expect(await vectorCount(t)).toBe(1);
    const before = await env.DB.prepare(`SELECT vector FROM local_vectors WHERE tenant_id = ?`).bind(t).first<{ vector: unknown }>();
    await upsertDocs(env.DB, [note(t, "kept", "Violin practice every evening.")]);
    expect(await ids(t, "violinist", true)).toEqual(["kept"]);
    const after = await env.DB.prepare(`SELECT vector FROM local_vectors WHERE tenant_id = ?`).bind(t).first<{ vector: unknown }>();
    expect(after).not.toEqual(before);
  });

  it("pages the fused ranking without repeats", async () => {
    const t = tenant();
    await upsertDocs(env.DB, Array.from({ length: 7 }, (_, i) => note(t, `n${i}`, `Garden note ${i}: tomatoes and gardening tools.`)));
    const all = await ids(t, "gardening", true, 20);
    const walked: string[] = [];
    let cursor: { mode: "and" | "or"; offset: number } | undefined;
    do {
      const page = await searchCortexPage(env.DB, t, "gardening", { limit: 3, fusion, cursor });
      walked.push(...page.hits.map((h) => h.id));
      cursor = page.next ?? undefined;
    } while (cursor);
    expect(walked).toEqual(all);
    expect(all).toHaveLength(7);
  });
});
