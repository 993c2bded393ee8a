import { describe, expect, it } from "vitest";
import { neighbourRerank } from "../../core/neighbour-rerank";

const m = (id: string, conversationId: string, seq: number, relevance: number) => ({ id, kind: "message", conversationId, seq, relevance });

describe("neighbourRerank", () => {
  it("lifts a turn whose adjacent turns in the same conversation also match", () => {
    const pool = [m("lone", "c1", 10, 5), m("turn", "c2", 4, 4), m("reply", "c2", 5, 3.2), m("far", "c2", 9, 2.9)];
    expect(neighbourRerank(pool).map((h) => h.id)).toEqual(["turn", "reply", "lone", "far"]);
  });
  it("gives nothing across conversations, to non-messages, or with a zero share; ties keep their order", () => {
    const pool = [m("a", "c1", 1, 3), m("b", "c2", 2, 3), { id: "note", kind: "memory", conversationId: "c1", seq: 2, relevance: 2 }, m("c", "c3", 7, 1)];
    expect(neighbourRerank(pool).map((h) => h.id)).toEqual(["a", "b", "note", "c"]);
    const lifted = [m("x", "c1", 1, 1), m("y", "c1", 2, 0.9), m("z", "c9", 1, 1.3)];
    expect(neighbourRerank(lifted).map((h) => h.id)).toEqual(["x", "y", "z"]);
    expect(neighbourRerank(lifted, 0).map((h) => h.id)).toEqual(["z", "x", "y"]);
  });
});
