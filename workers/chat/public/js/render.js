// Rendering of messages, content blocks and compaction cards, shared by the chat, History and
// replay views. Tool calls and results are collapsed <details> with their sizes in the summary.
import { bytes, chars, h, num, time } from "./dom.js";

const NOTE = /^<attachment id="([^"]+)" name="([^"]*)">\n([\s\S]*?)\n<\/attachment>$/;

/**
 * The attachment note a block is, if it is one. The server writes notes into user messages only:
 * a reply (or anything else) shaped like one is text, never a file card.
 * @param {any} b @param {string | undefined} role the role of the message holding the block
 */
const noteOf = (b, role) => (role === "user" && b.type === "text" ? NOTE.exec(b.text) : null);

/** A note's file name as its owner wrote it (the note escapes `& < > "`). @param {string} raw */
export const noteName = (raw) =>
  raw
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** The text of a tool_result's content (string or blocks). @param {any} content */
export function resultText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content ?? "");
  return content
    .map((b) => (b.type === "text" ? b.text : `[${b.type}${b.source?.media_type ? ` ${b.source.media_type}` : ""}]`))
    .join("\n");
}

/** How many characters of a long text (a tool's result) the page shows before "Show all". */
export const SHOWN_CHARS = 20_000;

/**
 * A text in a <pre>, bounded: one longer than SHOWN_CHARS shows its head, a line saying how much is
 * not shown, and a "Show all" button that puts the rest in (a multi-MB text put in whole freezes
 * the tab). The <pre> then takes the focus, so the keyboard stays where the button was.
 * @param {string} text
 * @returns {HTMLElement}
 */
export function boundedPre(text) {
  if (text.length <= SHOWN_CHARS) return h("pre", null, text);
  // Not between the two halves of a surrogate pair.
  const cut = /[\uD800-\uDBFF]/.test(text[SHOWN_CHARS - 1]) ? SHOWN_CHARS - 1 : SHOWN_CHARS;
  const pre = h("pre", { tabindex: "-1" }, text.slice(0, cut));
  const more = h(
    "div",
    { class: "more-text" },
    h("span", { class: "muted" }, `${chars(text.length - cut)} more not shown (${chars(text.length)} in all). `),
    h(
      "button",
      {
        type: "button",
        class: "link show-all",
        onclick: () => {
          pre.textContent = text;
          more.remove();
          pre.focus();
        },
      },
      "Show all",
    ),
  );
  return h("div", { class: "bounded-text" }, pre, more);
}

/** Chars of one block as the request carries it. @param {any} b */
export function blockChars(b) {
  if (b.type === "text") return b.text.length;
  if (b.type === "tool_use") return JSON.stringify(b.input ?? {}).length;
  if (b.type === "tool_result") return resultText(b.content).length;
  if (b.type === "image") return b.source?.data?.length ?? 0;
  return JSON.stringify(b).length;
}

/**
 * @typedef {{ toolNames: Map<string, string>, badges?: (block: any) => (Node | string)[] }} RenderContext
 * toolNames maps tool_use ids to names so a result can say which tool it answers; badges adds
 * view-specific labels (stubbed, preamble, ...) to a block.
 */
export const newContext = () => /** @type {RenderContext} */ ({ toolNames: new Map() });

/**
 * @param {any} b @param {RenderContext} ctx
 * @param {{ role?: string }} [from] the message holding the block: only a user message's text can be an attachment note
 */
export function renderBlock(b, ctx, { role } = {}) {
  const extra = ctx.badges?.(b) ?? [];
  if (b.type === "text") {
    const note = noteOf(b, role);
    if (note) {
      return h(
        "div",
        { class: "note", "data-attachment": note[1] },
        h(
          "div",
          { class: "note-title" },
          h("span", { class: "tag" }, "attachment"),
          " ",
          noteName(note[2]),
          " ",
          h("code", null, note[1]),
          extra,
        ),
        h("div", { class: "note-body" }, note[3]),
      );
    }
    const cited =
      Array.isArray(b.citations) && b.citations.length
        ? h(
            "div",
            { class: "citations muted" },
            "Sources: ",
            b.citations.map((/** @type {any} */ c, /** @type {number} */ i) => [
              i ? ", " : "",
              link(c.url ?? "", c.title || c.url || "source"),
            ]),
          )
        : null;
    return h("div", { class: "text" }, extra.length ? h("div", { class: "badges" }, extra) : null, b.text, cited);
  }
  if (b.type === "tool_use") {
    ctx.toolNames.set(b.id, b.name);
    const input = JSON.stringify(b.input ?? {}, null, 2);
    return h(
      "details",
      { class: "tool-use", "data-tool-use": b.id },
      h(
        "summary",
        null,
        h("span", { class: "tag" }, "tool call"),
        " ",
        h("strong", null, b.name),
        " ",
        h("span", { class: "size" }, chars(input.length)),
        extra,
      ),
      h("pre", null, input),
    );
  }
  if (b.type === "tool_result") {
    const text = resultText(b.content);
    const name = ctx.toolNames.get(b.tool_use_id);
    return h(
      "details",
      { class: `tool-result${b.is_error ? " error" : ""}`, "data-tool-result": b.tool_use_id },
      h(
        "summary",
        null,
        h("span", { class: "tag" }, b.is_error ? "error result" : "result"),
        " ",
        name ? h("strong", null, name) : null,
        " ",
        h("span", { class: "size" }, chars(text.length)),
        extra,
      ),
      boundedPre(text),
    );
  }
  if (b.type === "image") {
    const size = b.source?.data ? bytes(Math.floor((b.source.data.length * 3) / 4)) : (b.source?.url ?? "");
    return h("div", { class: "image" }, `[image ${b.source?.media_type ?? ""} ${size}]`, extra);
  }
  if (b.type === "thinking" || b.type === "redacted_thinking")
    return thinkingBlock(b.type === "thinking" ? b.thinking : null, extra);
  if (b.type === "server_tool_use") {
    const input = JSON.stringify(b.input ?? {}, null, 2);
    return h(
      "details",
      { class: "tool-use server", "data-tool-use": b.id },
      h(
        "summary",
        null,
        h(
          "span",
          { class: "tag" },
          b.name === "web_search" ? "web search" : b.name === "web_fetch" ? "web fetch" : b.name,
        ),
        " ",
        h("strong", null, b.input?.query ?? b.input?.url ?? ""),
        extra,
      ),
      h("pre", null, input),
    );
  }
  if (typeof b.type === "string" && b.type.endsWith("_tool_result") && "tool_use_id" in b)
    return serverResult(b, extra);
  return h("pre", { class: "unknown" }, JSON.stringify(b, null, 2));
}

/**
 * The model's thinking, collapsed: its summary when the display was "summarized", a marker when the
 * API returned none ("omitted") or returned it encrypted (null).
 * @param {string | null} text @param {(Node | string)[]} [extra]
 */
export function thinkingBlock(text, extra = []) {
  const label = text === null ? "Thought (encrypted)" : text ? "Thought" : "Thought (not shown)";
  return h(
    "details",
    { class: "thinking" },
    h("summary", null, h("span", { class: "tag" }, label), extra),
    text ? h("div", { class: "thinking-text" }, text) : null,
  );
}

/** A server tool's result: a search's titles and addresses, a fetched page's address; the rest as JSON. @param {any} b @param {(Node | string)[]} extra */
function serverResult(b, extra) {
  const items = Array.isArray(b.content)
    ? b.content.filter((/** @type {any} */ r) => r && typeof r.url === "string")
    : [];
  const fetched = !Array.isArray(b.content) && typeof b.content?.url === "string" ? b.content.url : null;
  const error = !Array.isArray(b.content) && b.content?.error_code ? b.content.error_code : null;
  const body = items.length
    ? h(
        "ul",
        { class: "sources" },
        items.map((/** @type {any} */ r) => h("li", null, link(r.url, r.title || r.url))),
      )
    : fetched
      ? h("div", null, link(fetched, fetched))
      : h("pre", null, JSON.stringify(b.content, null, 2));
  return h(
    "details",
    { class: `tool-result server${error ? " error" : ""}`, "data-tool-result": b.tool_use_id },
    h(
      "summary",
      null,
      h("span", { class: "tag" }, error ? `error: ${error}` : "result"),
      " ",
      items.length ? `${items.length} sources` : fetched ? "fetched page" : b.type,
      extra,
    ),
    body,
  );
}

/** A link only to http(s) addresses, opened apart from the app. @param {string} url @param {string} text */
function link(url, text) {
  return /^https?:\/\//i.test(url)
    ? h("a", { href: url, target: "_blank", rel: "noopener noreferrer nofollow" }, text)
    : h("span", null, text);
}

/** @param {any} m a stored message @param {RenderContext} ctx */
export function renderMessage(m, ctx, { live = false } = {}) {
  const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
  const onlyResults = content.length > 0 && content.every((/** @type {any} */ b) => b.type === "tool_result");
  const isNote = content.length === 1 && noteOf(content[0], m.role) !== null;
  const kind = onlyResults ? "results" : isNote ? "attachment" : m.role;
  return h(
    "article",
    {
      class: `msg ${m.role} ${kind}${m.agent ? " agent" : ""}${live ? " live" : ""}`,
      id: m.id ? `m-${m.id}` : undefined,
      "data-id": m.id,
      "data-seq": m.seq,
    },
    h(
      "header",
      null,
      h("span", { class: "role" }, kind === "results" ? "tool results" : kind),
      // A sub-agent's message (workflow mode): kept in the record, never replayed to the main agent.
      m.agent
        ? h(
            "span",
            { class: "agent-tag", title: "a sub-agent's step: saved, never replayed to the main agent" },
            `sub-agent ${m.agent.name}`,
          )
        : null,
      m.seq ? h("span", { class: "seq" }, `#${m.seq}`) : null,
      m.createdAt ? h("time", null, time(m.createdAt)) : null,
    ),
    content.map((/** @type {any} */ b, /** @type {number} */ i) => {
      const el = renderBlock(b, ctx, { role: m.role });
      // A note written just before a tool call (a progress update, which current models put in a
      // thinking block) is what the model says it is doing: shown open, not folded away.
      if (b.type === "thinking" && b.thinking && content[i + 1]?.type === "tool_use") el.setAttribute("open", "");
      return el;
    }),
  );
}

/** The pulsing card shown while a compaction pass runs. @param {any} e a compaction_started event */
export function runningCompactionCard(e) {
  return h(
    "div",
    { class: "card compaction running", role: "status" },
    h("div", { class: "card-title" }, e.forced ? "Compacting (forced by an overflow)…" : "Compacting this turn…"),
    h("div", null, `${num(e.tokens)} tokens against a budget of ${num(e.budgetTokens)}`),
  );
}

/** The finished card: targets, tokens saved, duration, details. @param {any} c a compaction event @param {string} [at] */
export function compactionCard(c, at) {
  return h(
    "div",
    { class: "card compaction done" },
    h(
      "div",
      { class: "card-title" },
      c.forced ? "Compacted (forced)" : "Compacted",
      at ? h("time", null, time(at)) : null,
    ),
    h(
      "dl",
      { class: "facts" },
      h("dt", null, "targets"),
      h("dd", { class: "targets" }, num(c.targets)),
      h("dt", null, "tokens saved"),
      h("dd", { class: "saved" }, num(c.tokensSaved)),
      h("dt", null, "before → after"),
      h("dd", null, `${num(c.tokensBefore)} → ${num(c.tokensAfter)}`),
      h("dt", null, "duration"),
      h("dd", null, `${num(c.durationMs)} ms`),
      h("dt", null, "turn state"),
      h("dd", null, c.summarized === "model" ? "written by the model" : "deterministic fallback"),
    ),
    c.details?.length
      ? h(
          "details",
          null,
          h("summary", null, `${c.details.length} block${c.details.length === 1 ? "" : "s"} trimmed`),
          h(
            "table",
            null,
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                h("th", null, "message"),
                h("th", null, "block"),
                h("th", null, "kind"),
                h("th", null, "before"),
                h("th", null, "after"),
              ),
            ),
            h(
              "tbody",
              null,
              c.details.map((/** @type {any} */ d) =>
                h(
                  "tr",
                  null,
                  h("td", null, d.index),
                  h("td", null, d.block),
                  h("td", null, d.kind),
                  h("td", null, chars(d.before)),
                  h("td", null, chars(d.after)),
                ),
              ),
            ),
          ),
        )
      : null,
  );
}

/** A timeline card (GET /timeline) of any type. @param {any} t */
export function timelineCard(t) {
  if (t.type === "compaction") return compactionCard(t.card, t.at);
  if (t.type === "model_changed") return modelChangedLine(t.card);
  return h(
    "div",
    { class: "card" },
    h("div", { class: "card-title" }, t.type),
    h("pre", null, JSON.stringify(t.card, null, 2)),
  );
}

/**
 * Messages with the timeline's cards placed after the message they followed.
 * @param {any[]} messages @param {any[]} cards @param {RenderContext} ctx
 */
export function interleave(messages, cards, ctx) {
  const bySeq = new Map();
  for (const c of cards) bySeq.set(c.afterSeq, [...(bySeq.get(c.afterSeq) ?? []), c]);
  const out = [];
  for (const m of messages) {
    out.push(renderMessage(m, ctx));
    for (const c of bySeq.get(m.seq) ?? []) out.push(timelineCard(c));
  }
  return out;
}

/** An error notice. @param {unknown} err */
export function errorLine(err) {
  const msg = err instanceof Error ? err.message : String(err);
  return h("div", { class: "error-line", role: "alert" }, msg);
}

/** The turn moved to another model: its own retired (the settings moved with it), or a refusal's fallback. @param {any} e */
export function modelChangedLine(e) {
  const why =
    e.reason === "retired"
      ? `${e.from} retired${e.retiredOn ? ` on ${e.retiredOn}` : ""}; this conversation now uses ${e.to}`
      : `${e.from} declined; ${e.to} answers this turn instead`;
  return h("div", { class: "notice", role: "status" }, why);
}

/** The model declined to answer. @param {any} e a refusal event */
export function refusalLine(e) {
  const what = `${e.model} declined to answer${e.category ? ` (${e.category})` : ""}${e.explanation ? `: ${e.explanation}` : "."}`;
  return h(
    "div",
    { class: "notice refusal", role: "status" },
    what,
    e.fallbackModel
      ? ` Asking ${e.fallbackModel} instead.`
      : " Nothing of this turn is sent to the model again; rephrase it, or set a fallback model in the settings.",
  );
}
