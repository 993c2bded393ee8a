// The recall sets' loaders (scripts/bench/sets/): each reads its benchmark's own format into the
// common shape bench:recall-public runs on. The fixtures (test/fixtures/recall-sets/) are tiny
// hand-written files in each format.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadSet, setsIn, TUNING_SET } from "../../scripts/bench/sets/index.mjs";
import { exchanges, loadedTurns, loadMode, pickQuestions, queryText } from "../../scripts/bench/sets/shape.mjs";

const DIR = join(__dirname, "../fixtures/recall-sets");

const turn = (set: ReturnType<typeof loadSet>, id: string) =>
  set.haystacks.flatMap((h) => h.sessions.flatMap((s) => s.turns)).find((t) => t.id === id);

describe("the recall sets", () => {
  it("are found by subfolder, one named set on --set, an unknown name refused", () => {
    expect(setsIn(DIR)).toEqual(["realmem", "locomo", "realtalk", "longmemeval"]);
    expect(setsIn(DIR, "locomo")).toEqual(["locomo"]);
    expect(() => setsIn(DIR, "nope")).toThrow(/--set: one of realmem, locomo, realtalk, longmemeval/);
    expect(setsIn(join(DIR, "locomo"))).toEqual([]);
    expect(TUNING_SET).toBe("realmem");
  });

  it("LoCoMo: one haystack per conversation, a speaker's run merged into one turn, category 5 left out", () => {
    const set = loadSet(DIR, "locomo");
    expect(set.haystacks.map((h) => h.id)).toEqual(["conv-x"]);
    const [s1, s2] = set.haystacks[0].sessions;
    expect(s1.date).toBe("1:00 pm on 2 May, 2023");
    // Ana's two lines are one user turn; Ben's photo caption stays in his text; whoever opens a session is the user.
    expect(s1.turns.map((t) => [t.id, t.role])).toEqual([
      ["D1:1", "user"],
      ["D1:3", "assistant"],
      ["D1:4", "user"],
    ]);
    expect(s1.turns[0].text).toBe("I started pottery classes on Tuesday.\nMy first bowl came out lopsided.");
    expect(s1.turns[1].text).toBe("Nice! I adopted a beagle named Pixel. [photo: a photo of a beagle puppy]");
    expect(s2.turns.map((t) => [t.id, t.role])).toEqual([
      ["D2:1", "user"],
      ["D2:2", "assistant"],
    ]);
    expect(set.questions.map((q) => [q.type, q.evidence])).toEqual([
      ["temporal", ["D1:1"]],
      ["multi-hop", ["D1:3", "D2:1"]],
      ["single-hop", ["D1:1"]],
    ]);
    expect(set.questions.every((q) => q.before === undefined && q.haystack === "conv-x")).toBe(true);
    expect(set.notes[0]).toMatch(/1 questions without a usable evidence id, 1 evidence ids naming no turn/);
  });

  it("REALTALK: LoCoMo's reading over clean_text, categories by number", () => {
    const set = loadSet(DIR, "realtalk");
    expect(set.haystacks.map((h) => h.id)).toEqual(["Chat_1_Cleo_Dan"]);
    expect(set.haystacks[0].sessions[0].turns.map((t) => [t.id, t.role, t.text])).toEqual([
      ["D1:1", "user", "Morning! I ran 5k by the river today."],
      ["D1:2", "assistant", "Impressive. I am stuck grading essays.\nForty of them."],
    ]);
    // Dan opens the second session, so he is its user.
    expect(set.haystacks[0].sessions[1].turns.map((t) => t.role)).toEqual(["user", "assistant", "user"]);
    expect(set.questions.map((q) => [q.type, q.evidence])).toEqual([
      ["category 1", ["D1:2"]],
      ["category 2", ["D1:1"]],
    ]);
  });

  it("RealMem: a query's evidence is the turns its reply's memory points came from, and it sees only earlier sessions", () => {
    const set = loadSet(DIR, "realmem");
    expect(set.haystacks.map((h) => [h.id, h.sessions.length])).toEqual([["Zoe_Park", 3]]);
    expect(set.questions).toEqual([
      {
        id: "Zoe_Park#Q-0001",
        haystack: "Zoe_Park",
        type: "Dynamic Incremental",
        question: "The tomatoes look pale.\nWhat should I change?",
        // source_turn 1 read 1-based (the user's line), the second point found by its snapshot.
        evidence: ["0:0", "0:1"],
        before: 1,
      },
    ]);
    expect(turn(set, "0:1")).toEqual({
      id: "0:1",
      role: "assistant",
      text: "Water them every second morning.",
      date: "2025-03-01 (Saturday)",
    });
    expect(set.notes[0]).toMatch(
      /3 memory points used by replies: 0 not traced to a turn, 1 from the query.s own or a later session \(left out\); 1 queries without evidence/,
    );
  });

  it("LongMemEval: one haystack per question, has_answer turns as evidence, abstention left out", () => {
    const set = loadSet(DIR, "longmemeval");
    expect(set.questions).toEqual([
      {
        id: "q-one",
        haystack: "q-one",
        type: "single-session-user",
        question: "What colour did I paint the shed?",
        evidence: ["9:0"],
      },
    ]);
    expect(set.haystacks[0].sessions).toHaveLength(10);
    expect(turn(set, "9:0")?.text).toBe("I painted the shed green last weekend.");
  });

  it("pick questions by a fixed shuffle, the same every run, by type when asked", () => {
    const set = loadSet(DIR, "locomo");
    const first = pickQuestions(set, 2).map((q) => q.id);
    expect(pickQuestions(set, 2).map((q) => q.id)).toEqual(first);
    expect(first).toHaveLength(2);
    expect(new Set(pickQuestions(set, 10).map((q) => q.id))).toEqual(new Set(set.questions.map((q) => q.id)));
    expect(pickQuestions(set, 10, "temporal").map((q) => q.type)).toEqual(["temporal"]);
  });

  it("load two people's talk turn by turn as user messages, a person and an assistant as exchanges", () => {
    expect(loadSet(DIR, "locomo").speakers).toBe("people");
    expect(loadSet(DIR, "realtalk").speakers).toBe("people");
    expect(loadMode(loadSet(DIR, "locomo"), undefined)).toBe("turns");
    expect(loadMode(loadSet(DIR, "realtalk"), undefined)).toBe("turns");
    expect(loadMode(loadSet(DIR, "realmem"), undefined)).toBe("import");
    expect(loadMode(loadSet(DIR, "longmemeval"), undefined)).toBe("import");
    expect(loadMode(loadSet(DIR, "locomo"), "import")).toBe("import");
    // --load is about two people's talk: a person and an assistant stay exchanges whatever it says.
    expect(loadMode(loadSet(DIR, "realmem"), "turns")).toBe("import");
    expect(() => loadMode(loadSet(DIR, "realmem"), "exchanges")).toThrow(/--load: turns or import/);
    // Posted turn by turn, every turn is stored as the person's, none left out.
    const [session] = loadSet(DIR, "realtalk").haystacks[0].sessions;
    const posted = loadedTurns(session.turns, "turns");
    expect(posted.kept.map((t) => [t.id, t.role])).toEqual(session.turns.map((t) => [t.id, "user"]));
    expect(posted.dropped).toEqual([]);
    expect(loadedTurns(session.turns, "import")).toEqual(exchanges(session.turns));
  });

  it("import whole exchanges, counting what breaks the alternation", () => {
    const t = (role: "user" | "assistant", text: string) => ({ role, text });
    const { kept, dropped } = exchanges([t("assistant", "a"), t("user", "b"), t("assistant", "c"), t("user", "d")]);
    expect(kept.map((x) => x.text)).toEqual(["b", "c"]);
    expect(dropped.map((x) => x.text)).toEqual(["a", "d"]);
  });

  it("search with the question as the route takes it: one line, at most 500 characters at a word boundary", () => {
    expect(queryText("pale\ntomatoes\tnow ")).toBe("pale tomatoes now");
    const long = `${"word ".repeat(99)}lastword more`;
    expect(queryText(long).length).toBeLessThanOrEqual(500);
    expect(queryText(long).endsWith("word")).toBe(true);
    expect(queryText(long)).not.toContain("lastword");
  });
});
