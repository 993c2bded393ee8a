// Types of shape.mjs (the common shape of a recall set) for the tests that import it.
export interface RecallTurn {
  id: string;
  role: "user" | "assistant";
  text: string;
  date: string;
}
export interface RecallSession {
  id: string;
  date: string;
  turns: RecallTurn[];
}
export interface RecallHaystack {
  id: string;
  sessions: RecallSession[];
}
export interface RecallQuestion {
  id: string;
  haystack: string;
  type: string;
  question: string;
  evidence: string[];
  before?: number;
}
export interface RecallSet {
  name: string;
  haystacks: RecallHaystack[];
  questions: RecallQuestion[];
  notes: string[];
  /** "people" when both sides are people (a turn's role only says who spoke first in its session). */
  speakers?: "people";
}
export function jsonFiles(dir: string): string[];
export function pickQuestions(set: RecallSet, limit: number, type?: string): RecallQuestion[];
export function exchanges<T extends { role: string; text: string }>(turns: T[]): { kept: T[]; dropped: T[] };
export function queryText(question: string): string;
export function loadMode(set: RecallSet, asked: string | undefined): "turns" | "import";
export function loadedTurns<T extends { role: string; text: string }>(
  turns: T[],
  mode: "turns" | "import",
): { kept: T[]; dropped: T[] };
