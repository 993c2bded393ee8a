// The common shape every recall set's loader produces (docs/recall-sets.md), and what they share.
//   RecallSet  {name, haystacks: Haystack[], questions: Question[], notes: string[], speakers?}:
//              `speakers` "people" when both sides are people (a turn's role only says who spoke
//              first in its session); absent, a person and an assistant
//   Haystack   {id, sessions: [{id, date, turns: [{id, role: "user"|"assistant", text, date}]}]}:
//              one tenant's history; turn ids are unique within it
//   Question   {id, haystack, type, question, evidence: turn ids, before?}: `before` (a session
//              index) limits what the question may see to the sessions before it, for a question
//              asked in the middle of the history; absent, it sees the whole haystack
import { createHash } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every `.json` file under `dir`, sorted by path. */
export function jsonFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...jsonFiles(p));
    else if (name.endsWith(".json")) out.push(p);
  }
  return out;
}

/**
 * `limit` questions chosen deterministically: ordered by sha256 of "set:id" (a fixed shuffle that
 * spreads the choice over every haystack and type), only those of `type` when given.
 */
export function pickQuestions(set, limit, type) {
  const key = (q) => createHash("sha256").update(`${set.name}:${q.id}`).digest("hex");
  return set.questions
    .filter((q) => !type || q.type === type)
    .map((q) => [key(q), q])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, limit)
    .map(([, q]) => q);
}

/**
 * How bench:recall-public loads a set: "turns" (each turn a user message through the messages
 * route, which the model answers) for two people talking, "import" (whole exchanges through the
 * import route) for a person and an assistant. `asked` (--load) chooses for two people's talk only:
 * a person-and-assistant set is always imported; any other value is refused.
 */
export function loadMode(set, asked) {
  if (asked !== undefined && asked !== "turns" && asked !== "import")
    throw new Error(`--load: turns or import (got "${asked}")`);
  if (set.speakers !== "people") return "import";
  return asked ?? "turns";
}

/**
 * A session's turns as the cortex stores them under `mode` (loadMode): posted turn by turn, every
 * turn is the person's (role "user"); imported, the whole exchanges (exchanges, below).
 */
export function loadedTurns(turns, mode) {
  return mode === "turns" ? { kept: turns.map((t) => ({ ...t, role: "user" })), dropped: [] } : exchanges(turns);
}

/**
 * A session's turns as whole exchanges (user then assistant), as the import route takes them; a
 * turn that breaks the alternation is left out and returned in `dropped`, so a lost evidence turn
 * shows in the figures.
 */
export function exchanges(turns) {
  const kept = [];
  const dropped = [];
  for (let i = 0; i < turns.length; i++) {
    const [u, a] = [turns[i], turns[i + 1]];
    if (u.role === "user" && a?.role === "assistant" && u.text.trim() && a.text.trim()) {
      kept.push(u, a);
      i++;
    } else dropped.push(u);
  }
  return { kept, dropped };
}

/**
 * The search text for a question, as GET /v1/search takes it (at most 500 characters, no control
 * characters): line breaks become spaces and a longer text is cut at its last word boundary before
 * 500. Every ranking here gets the same text.
 */
export function queryText(question) {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the route refuses
  const flat = question.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  if (flat.length <= 500) return flat;
  const cut = flat.slice(0, 501);
  return cut.slice(0, cut.lastIndexOf(" ") > 0 ? cut.lastIndexOf(" ") : 500).trim();
}
