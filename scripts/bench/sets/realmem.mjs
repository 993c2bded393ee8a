// RealMem (RealMemBench, zhiyuan5986/RealMemBench, dataset/*_dialogues_256k.json; Apache-2.0 per its
// LICENSE file) under RECALL_DATA_DIR/realmem: 10 personas, each ~190 user-assistant sessions
// (~220k tokens) of long-running projects. A "query" is a user turn (is_query) that needs something
// from earlier sessions; the assistant's reply names the memory points it used (memory_used: a
// session uuid and the point's text), and each point records the turn it was extracted from
// (extracted_memory: source_turn, source_content_snapshot). Those turns are the query's evidence.
// One haystack per persona; a query sees the sessions before its own (`before`), as it was asked.
// The query's category (Dynamic Incremental, Implicit Preference, ...) is its type.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { jsonFiles } from "./shape.mjs";

const role = (speaker) => (String(speaker).toLowerCase() === "user" ? "user" : "assistant");

/**
 * The turn a memory point came from: source_turn read 1-based (as most points are), else 0-based,
 * else the turn whose text starts with the point's snapshot; null when none matches.
 */
function sourceTurn(session, point) {
  const turns = session.dialogue_turns ?? [];
  const snap = String(point.source_content_snapshot ?? "").slice(0, 80);
  const same = (j) => j >= 0 && j < turns.length && String(turns[j].content ?? "").slice(0, 80) === snap;
  const n = Number(point.source_turn);
  if (same(n - 1)) return n - 1;
  if (same(n)) return n;
  const j = snap ? turns.findIndex((_, k) => same(k)) : -1;
  return j >= 0 ? j : null;
}

export function loadSet(dir) {
  const counts = { points: 0, unmatched: 0, later: 0, noEvidence: 0 };
  const haystacks = [];
  const questions = [];
  for (const file of jsonFiles(dir)) {
    const data = JSON.parse(readFileSync(file, "utf8"));
    if (!Array.isArray(data?.dialogues)) continue;
    const persona = basename(file, ".json").replace(/_dialogues_\w+$/, "");
    const dialogues = data.dialogues;
    const index = new Map(dialogues.map((d, s) => [d.session_uuid, s]));
    haystacks.push({
      id: persona,
      sessions: dialogues.map((d, s) => ({
        id: String(d.session_identifier ?? d.session_uuid ?? s),
        date: String(d.current_time ?? ""),
        turns: (d.dialogue_turns ?? []).map((t, j) => ({
          id: `${s}:${j}`,
          role: role(t.speaker),
          text: String(t.content ?? ""),
          date: String(d.current_time ?? ""),
        })),
      })),
    });
    dialogues.forEach((d, s) => {
      const turns = d.dialogue_turns ?? [];
      turns.forEach((t, j) => {
        if (!t.is_query) return;
        const evidence = new Set();
        for (const used of turns[j + 1]?.memory_used ?? []) {
          counts.points++;
          const from = index.get(used.session_uuid);
          const point =
            from === undefined
              ? undefined
              : (dialogues[from].extracted_memory ?? []).find((m) => m.content === used.content);
          const turn = point ? sourceTurn(dialogues[from], point) : null;
          if (turn === null) counts.unmatched++;
          else if (from >= s) counts.later++;
          else evidence.add(`${from}:${turn}`);
        }
        if (!evidence.size) {
          counts.noEvidence++;
          return;
        }
        questions.push({
          id: `${persona}#${t.query_id ?? `${s}:${j}`}`,
          haystack: persona,
          type: String(t.category_name ?? "query"),
          question: String(t.content ?? ""),
          evidence: [...evidence],
          before: s,
        });
      });
    });
  }
  return {
    name: "realmem",
    haystacks,
    questions,
    notes: [
      `${counts.points} memory points used by replies: ${counts.unmatched} not traced to a turn, ${counts.later} from the query's own or a later session (left out); ${counts.noEvidence} queries without evidence left out`,
    ],
  };
}
