// REALTALK (Lee et al., 2025; danny911kr/REALTALK, data/Chat_*.json): 10 real 21-day messaging-app
// conversations between two people, in LoCoMo's format (sessions of {speaker, clean_text, dia_id,
// date_time}, a `qa` list marking evidence dialog ids), under RECALL_DATA_DIR/realtalk. The
// repository states no licence; the data is read where it is, never copied into this one. Its
// memory-probing categories are numbered 1-3 and named here by number. The mapping to exchanges
// is locomo.mjs's (dialogueSessions).
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { dialogueQuestions, dialogueSessions } from "./locomo.mjs";
import { jsonFiles } from "./shape.mjs";

export function loadSet(dir) {
  const counts = { unknownEvidence: 0, noEvidence: 0 };
  const haystacks = [];
  const questions = [];
  for (const file of jsonFiles(dir)) {
    const data = JSON.parse(readFileSync(file, "utf8"));
    if (!Array.isArray(data?.qa) || !data.session_1) continue;
    const id = basename(file, ".json");
    const { sessions, turnOf } = dialogueSessions(data, (m) => String(m.clean_text ?? m.text ?? "").trim());
    haystacks.push({ id, sessions });
    questions.push(...dialogueQuestions(id, data.qa, turnOf, (c) => (c ? `category ${c}` : null), counts));
  }
  return {
    name: "realtalk",
    speakers: "people",
    haystacks,
    questions,
    notes: [
      `${counts.noEvidence} questions without a usable evidence id, ${counts.unknownEvidence} evidence ids naming no turn`,
    ],
  };
}
