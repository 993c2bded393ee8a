import { describe, expect, it } from "vitest";
import { dot, fnv1a, HASHED_DIMENSIONS, hashedEmbedding, textFeatures } from "../../core/hashed-embedding";

const norm = (v: Float32Array) => Math.sqrt(dot(v, v));

describe("hashed embedding", () => {
  it("is unit length, deterministic, and the same text is similarity 1", () => {
    const a = hashedEmbedding("I repainted the kitchen in a bright colour last spring");
    expect(a.length).toBe(HASHED_DIMENSIONS);
    expect(norm(a)).toBeCloseTo(1, 5);
    expect([...hashedEmbedding("I repainted the kitchen in a bright colour last spring")]).toEqual([...a]);
    expect(dot(a, a)).toBeCloseTo(1, 5);
  });
  it("puts spelling and word-form variants closer than unrelated text (what exact terms miss)", () => {
    const q = hashedEmbedding("what colours did I paint");
    const variant = hashedEmbedding("the kitchen walls are now in bright colors");
    const unrelated = hashedEmbedding("my flight to Denver leaves on Tuesday morning");
    expect(dot(q, variant)).toBeGreaterThan(0.1);
    expect(dot(q, variant)).toBeGreaterThan(dot(q, unrelated) + 0.1);
  });
  it("leaves function words out and counts repeats sublinearly", () => {
    expect([...textFeatures("what did I say about it")]).toEqual([]);
    expect(norm(hashedEmbedding("what did I say about it"))).toBe(0);
    expect(textFeatures("hike hike hike").get("w:hike")).toBe(3);
    // A word said six times is not six times the evidence: the other word keeps its say
    // (with raw counts its similarity would be about 0.16).
    expect(dot(hashedEmbedding("hike hike hike hike hike hike tent"), hashedEmbedding("tent"))).toBeGreaterThan(0.3);
  });
  it("hashes with FNV-1a (the published test vectors)", () => {
    expect(fnv1a("")).toBe(0x811c9dc5);
    expect(fnv1a("a")).toBe(0xe40c292c);
    expect(fnv1a("foobar")).toBe(0xbf9cf968);
  });
});
