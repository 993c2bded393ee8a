// LoCoMo (Maharana et al., ACL 2024; snap-research/LoCoMo, data/locomo10.json; CC BY-NC 4.0) under
// RECALL_DATA_DIR/locomo: 10 long conversations between two people (~19 sessions, ~600 turns each),
// each with its question set marking the evidence turns by dialog id ("D3:7"). One haystack per
// conversation; every question sees the whole of it. Category 5 (adversarial: the answer is not
// in the conversation) is left out, as abstention is in LongMemEval. The same reader serves
// REALTALK (realtalk.mjs), which keeps LoCoMo's format.
//
// A run of messages by one speaker is one turn (its lines joined). Both sides are people
// (`speakers: "people"`), so bench:recall-public posts every turn as a user message (sets/shape.mjs
// loadMode); for its --load import, each turn's role says who spoke first in its session (the
// user) and who second (the assistant). A shared photo's caption is kept in the turn's text
// ("[photo: ...]"), as the dataset gives it in place of the image.
import { readFileSync } from "node:fs";
import { jsonFiles } from "./shape.mjs";

/** LoCoMo's categories as its paper numbers them (4 is single-hop, 1 multi-hop). */
const CATEGORIES = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop" };

/** One conversation (a LoCoMo sample's `conversation`, or a REALTALK file) as sessions of merged turns, and dia_id -> turn id. */
export function dialogueSessions(conv, textOf) {
  const keys = Object.keys(conv)
    .filter((k) => /^session_\d+$/.test(k) && Array.isArray(conv[k]))
    .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)));
  const turnOf = new Map();
  const sessions = keys.map((key) => {
    const date = String(conv[`${key}_date_time`] ?? "");
    const turns = [];
    let first;
    for (const m of conv[key]) {
      const text = textOf(m);
      if (!text) continue;
      first ??= m.speaker;
      const last = turns.at(-1);
      if (last && last.speaker === m.speaker) last.text += `\n${text}`;
      else
        turns.push({
          id: String(m.dia_id),
          role: m.speaker === first ? "user" : "assistant",
          speaker: m.speaker,
          text,
          date: String(m.date_time ?? date),
        });
      if (!turnOf.has(String(m.dia_id))) turnOf.set(String(m.dia_id), turns.at(-1).id);
    }
    return { id: key, date, turns: turns.map(({ speaker, ...t }) => t) };
  });
  return { sessions, turnOf };
}

/** Questions of one conversation: evidence dia_ids (some entries hold several, "D8:6; D9:17") mapped to turns. */
export function dialogueQuestions(haystack, qa, turnOf, typeOf, counts) {
  const out = [];
  qa.forEach((q, i) => {
    const type = typeOf(q.category);
    if (!type || !q.question) return;
    const ids = String((q.evidence ?? []).join(" ")).match(/D\d+:\d+/g) ?? [];
    const evidence = [...new Set(ids.map((id) => turnOf.get(id)).filter(Boolean))];
    counts.unknownEvidence += ids.filter((id) => !turnOf.has(id)).length;
    if (!evidence.length) {
      counts.noEvidence++;
      return;
    }
    out.push({ id: `${haystack}#${i}`, haystack, type, question: String(q.question), evidence });
  });
  return out;
}

const photo = (m) => (m.blip_caption ? `[photo: ${m.blip_caption}]` : "");

export function loadSet(dir) {
  const counts = { unknownEvidence: 0, noEvidence: 0 };
  const haystacks = [];
  const questions = [];
  for (const file of jsonFiles(dir)) {
    const data = JSON.parse(readFileSync(file, "utf8"));
    for (const sample of Array.isArray(data) ? data : [data]) {
      if (!sample?.conversation || !Array.isArray(sample.qa)) continue;
      const id = String(sample.sample_id ?? `${haystacks.length}`);
      const { sessions, turnOf } = dialogueSessions(sample.conversation, (m) =>
        [String(m.text ?? "").trim(), photo(m)].filter(Boolean).join(" "),
      );
      haystacks.push({ id, sessions });
      questions.push(...dialogueQuestions(id, sample.qa, turnOf, (c) => CATEGORIES[c], counts));
    }
  }
  return {
    name: "locomo",
    speakers: "people",
    haystacks,
    questions,
    notes: [
      `category 5 (adversarial) left out; ${counts.noEvidence} questions without a usable evidence id, ${counts.unknownEvidence} evidence ids naming no turn`,
    ],
  };
}
