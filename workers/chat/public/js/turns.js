// The chat's reading view of a transcript: messages grouped into turns (a person's prompt and one
// assistant block holding everything the turn produced), tool steps collapsed into one line each,
// attachment notes as file chips, compaction as a one-line notice. The plumbing (seq numbers,
// token counts, raw notes, card tables) is marked `dev-only` and shown in the developer view.
import { chars, h, num, time } from "./dom.js";
import { renderMarkdownOrText } from "./markdown.js";
import { boundedPre, compactionCard, noteName, renderBlock, resultText, thinkingBlock } from "./render.js";

export const NOTE = /^<attachment id="([^"]+)" name="([^"]*)">\n([\s\S]*?)\n<\/attachment>$/;

/** @param {any} m */
const blocksOf = (m) => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? []));

/** The text a person wrote (attachment notes in the same message left out). @param {any} m */
export function promptText(m) {
  return blocksOf(m)
    .filter((/** @type {any} */ b) => b.type === "text" && !NOTE.test(b.text))
    .map((/** @type {any} */ b) => b.text)
    .join("\n\n");
}

/** @param {any} m */
export const isNote = (m) =>
  m.role === "user" &&
  blocksOf(m).length > 0 &&
  blocksOf(m).every((/** @type {any} */ b) => b.type === "text" && NOTE.test(b.text));
/** A message a person wrote (not tool results, not only notes). @param {any} m */
export const isPrompt = (m) =>
  m.role === "user" &&
  !m.agent &&
  !isNote(m) &&
  blocksOf(m).some((/** @type {any} */ b) => b.type === "text" || b.type === "image");

/**
 * @typedef {{ kind: "turn", user: any | null, replies: any[], earlier: any[][] } | { kind: "note", message: any }} Item
 * Every prompt starts a turn, even one that repeats the prompt before it word for word: a
 * regenerate's earlier replies are found from the transcript's superseded markers (chat.js), never
 * from matching text. `earlier` is left empty here.
 * @param {any[]} messages @returns {Item[]}
 */
export function groupTurns(messages) {
  /** @type {Item[]} */
  const items = [];
  /** @type {any} */
  let turn = null;
  for (const m of messages) {
    if (isNote(m)) {
      items.push({ kind: "note", message: m });
      continue;
    }
    if (isPrompt(m)) {
      turn = {
        kind: /** @type {const} */ ("turn"),
        user: m,
        replies: /** @type {any[]} */ ([]),
        earlier: /** @type {any[][]} */ ([]),
      };
      items.push(turn);
      continue;
    }
    if (!turn)
      items.push(
        (turn = {
          kind: /** @type {const} */ ("turn"),
          user: null,
          replies: /** @type {any[]} */ ([]),
          earlier: /** @type {any[][]} */ ([]),
        }),
      );
    turn.replies.push(m);
  }
  return items;
}

/** The facts of a note's first line: type, size and counts (pages, lines, sheets). @param {string} body */
function noteFacts(body) {
  const first = body.split("\n")[0] ?? "";
  const type = first.split(",")[0] ?? "";
  const size = /,\s*([\d.]+\s*[KMGT]?B)\b/.exec(first)?.[1] ?? "";
  const counts = [...first.matchAll(/([\d,]+)\s+(pages?|lines?|sheets?|rows?)/g)].map((m) => `${m[1]} ${m[2]}`);
  const unreadable = /could not be inspected: ([^;.]*)/.exec(first)?.[1];
  return { type, size, counts, unreadable };
}

/** An attachment note as a file chip; the note the model reads is in the developer view. @param {any} m */
export function noteChip(m) {
  const note = /** @type {RegExpExecArray} */ (NOTE.exec(blocksOf(m)[0].text));
  return h(
    "article",
    { class: "msg attachment", "data-id": m.id, "data-seq": m.seq },
    fileChip(note),
    h("details", { class: "dev-only note-raw" }, h("summary", null, "What the model reads"), h("pre", null, note[3])),
  );
}

/** A note's file as a chip: name, type, size and counts. @param {RegExpExecArray} note */
function fileChip(note) {
  const f = noteFacts(note[3]);
  return h(
    "div",
    { class: "note file-chip", "data-attachment": note[1] },
    h("span", { class: "file-icon", "aria-hidden": "true" }, "📄"),
    h("span", { class: "file-name" }, noteName(note[2])),
    h("span", { class: "file-facts" }, [f.type, f.size, ...f.counts].filter(Boolean).join(" · ")),
    f.unreadable ? h("span", { class: "warn" }, ` could not be read: ${f.unreadable}`) : null,
  );
}

/** @param {any} m the person's message */
export function userMessage(m) {
  const images = blocksOf(m).filter((/** @type {any} */ b) => b.type === "image");
  // Files sent with the message (a turn's `attachments`) are notes inside it: shown as chips.
  const notes = blocksOf(m).flatMap((/** @type {any} */ b) =>
    b.type === "text" && NOTE.test(b.text) ? [/** @type {RegExpExecArray} */ (NOTE.exec(b.text))] : [],
  );
  return h(
    "article",
    { class: "msg user", "data-id": m.id, "data-seq": m.seq, "aria-label": "You said" },
    h(
      "div",
      { class: "bubble" },
      notes.length ? h("div", { class: "attached" }, notes.map(fileChip)) : null,
      h("div", { class: "text", dir: "auto" }, promptText(m)),
      images.map((/** @type {any} */ b) => renderBlock(b, { toolNames: new Map() })),
    ),
    notes.map((/** @type {RegExpExecArray} */ n) =>
      h(
        "details",
        { class: "dev-only note-raw" },
        h("summary", null, `What the model reads of ${noteName(n[2])}`),
        h("pre", null, n[3]),
      ),
    ),
    h("div", { class: "msg-meta dev-only" }, m.seq ? `#${m.seq}` : "", m.createdAt ? ` · ${time(m.createdAt)}` : ""),
    h("div", { class: "actions" }),
  );
}

/** A collapsed tool step: "Used name ▸", the call's input and its result inside. @param {any} call @param {any} [result] */
export function toolStep(call, result) {
  const el = h(
    "details",
    { class: "tool-step", "data-tool-use": call.id },
    h(
      "summary",
      null,
      h("span", { class: "step-label" }, "Used ", h("strong", null, toolLabel(call.name))),
      h("span", { class: "size dev-only" }, ""),
    ),
    h(
      "div",
      { class: "step-body" },
      h(
        "div",
        { class: "step-part" },
        h("div", { class: "step-title" }, "Input"),
        h("pre", null, JSON.stringify(call.input ?? {}, null, 2)),
      ),
    ),
  );
  if (result) fillStep(el, result);
  return el;
}

/** A readable tool name (MCP tools are `mcp__server__tool`). @param {string} name */
export const toolLabel = (name) => (name.startsWith("mcp__") ? name.split("__").slice(1).join(" · ") : name);

/** The step's result: its text (a long one bounded, "Show all" for the rest; or the stream's preview). @param {HTMLElement} el @param {{ is_error?: boolean, text: string, chars?: number }} r */
export function fillStep(el, r) {
  el.classList.remove("running");
  el.classList.toggle("error", !!r.is_error);
  const label = /** @type {HTMLElement} */ (el.querySelector(".step-label"));
  const name = label.querySelector("strong")?.textContent ?? "";
  label.replaceChildren(r.is_error ? "Tried " : "Used ", h("strong", null, name), r.is_error ? " (it failed)" : "");
  const size = el.querySelector(".size");
  if (size) size.textContent = ` ${chars(r.chars ?? r.text.length)}`;
  el.querySelector(".step-result")?.remove();
  el.querySelector(".step-body")?.append(
    h(
      "div",
      { class: "step-part step-result", "data-tool-result": el.dataset.toolUse },
      h("div", { class: "step-title" }, r.is_error ? "Error" : "Result"),
      boundedPre(r.text),
    ),
  );
}

/** A one-line compaction notice that expands to its card. @param {any} c @param {string} [at] */
export function compactionNotice(c, at) {
  return h(
    "details",
    { class: "compaction-notice" },
    h(
      "summary",
      null,
      `Older context was compacted to make room${c.tokensSaved ? ` (${num(c.tokensSaved)} tokens saved)` : ""}`,
    ),
    compactionCard(c, at),
  );
}

/**
 * One assistant block for a turn's replies: its thinking and tool steps collapsed, its text as
 * markdown (or plain text, should the renderer throw on it: the turn and the rest of the chat still
 * show); a sub-agent's steps folded into one line. A reply the model refused ends with a
 * notice saying so (with the refusal's category when this page saw the live event: `refusals`,
 * by the refused reply's message id).
 * @param {any[]} replies @param {{ refusals?: Map<string, string | null> }} [opts]
 */
export function assistantBlock(replies, { refusals } = {}) {
  const el = h("article", { class: "msg assistant", "aria-label": "Assistant" });
  /** @type {Map<string, HTMLElement>} */
  const steps = new Map();
  const body = h("div", { class: "reply-body" });
  /** @type {Map<string, HTMLElement>} */
  const agents = new Map();
  for (const m of replies) {
    if (m.agent) {
      let box = agents.get(m.agent.name);
      if (!box) {
        box = h(
          "details",
          { class: "tool-step agent-steps" },
          h("summary", null, "Sub-agent ", h("strong", null, m.agent.name), " worked on a task"),
          h("div", { class: "step-body" }),
        );
        agents.set(m.agent.name, box);
        body.append(box);
      }
      const inner = /** @type {HTMLElement} */ (box.querySelector(".step-body"));
      for (const b of blocksOf(m))
        if (b.type === "text") inner.append(renderMarkdownOrText(h("div", { class: "md" }), b.text));
      continue;
    }
    // Each thinking section is named by its message and its place among the message's thinking
    // (as the streamed turn names it), so one the reader opened stays open through a re-render.
    let thought = 0;
    for (const b of blocksOf(m)) {
      if (b.type === "text") body.append(renderMarkdownOrText(h("div", { class: "md" }), b.text));
      else if (b.type === "thinking" || b.type === "redacted_thinking") {
        const el = thinkingBlock(b.type === "thinking" ? b.thinking : null);
        el.dataset.thinking = `${m.id}:${thought++}`;
        body.append(el);
      } else if (b.type === "tool_use") {
        const step = toolStep(b);
        steps.set(b.id, step);
        body.append(step);
      } else if (b.type === "tool_result") {
        const step = steps.get(b.tool_use_id);
        if (step) fillStep(step, { is_error: b.is_error, text: resultText(b.content) });
      } else body.append(renderBlock(b, { toolNames: new Map() }));
    }
  }
  const last = [...replies].reverse().find((m) => m.role === "assistant" && !m.agent);
  const usage = replies.reduce(
    (u, m) =>
      m.usage
        ? {
            in:
              u.in +
              (m.usage.input_tokens ?? 0) +
              (m.usage.cache_read_input_tokens ?? 0) +
              (m.usage.cache_creation_input_tokens ?? 0),
            out: u.out + (m.usage.output_tokens ?? 0),
          }
        : u,
    { in: 0, out: 0 },
  );
  el.append(body);
  if (last?.stopReason === "interrupted") el.append(h("div", { class: "stopped-note" }, "Stopped"));
  if (last?.stopReason === "refusal") el.append(refusalNotice(refusals?.get(last.id) ?? null));
  el.append(
    h("div", { class: "msg-meta dev-only" }, [
      last?.model ?? "",
      last?.stopReason ? ` · ${last.stopReason}` : "",
      usage.in || usage.out ? ` · input ${num(usage.in)} · output ${num(usage.out)} tokens` : "",
      ` · #${replies[0]?.seq ?? "?"}–#${replies[replies.length - 1]?.seq ?? "?"}`,
    ]),
    h("div", { class: "actions" }),
  );
  el.dataset.ids = replies.map((m) => m.id).join(" ");
  return el;
}

/** The settled notice of a refused reply. @param {string | null} category */
export function refusalNotice(category) {
  return h(
    "div",
    { class: "notice refusal", role: "note" },
    `The model declined to answer${category ? ` (${category})` : ""}; this exchange is not sent to the model again. Rephrase it, or set a fallback model in the settings.`,
  );
}

/** The text of a turn's replies, for Copy. @param {any[]} replies */
export function replyText(replies) {
  return replies
    .filter((m) => m.role === "assistant" && !m.agent)
    .flatMap((m) =>
      blocksOf(m)
        .filter((/** @type {any} */ b) => b.type === "text")
        .map((/** @type {any} */ b) => b.text),
    )
    .join("\n\n");
}
