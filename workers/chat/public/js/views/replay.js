// What the next model request carries (GET /replay): the lean prefix, the summary preamble and
// its acknowledgement, stubs for stale tool results, the verbatim tail, and its size against the
// budget (context window − output reserve).
import { api } from "../api.js";
import { chars, h, num, replace } from "../dom.js";
import { blockChars, errorLine, newContext, renderMessage, resultText } from "../render.js";

/** How core/stubs.ts stubText begins. */
const STUB = "[stale tool result replaced by this stub:";

/**
 * @param {HTMLElement} root @param {string} id
 * @param {AbortSignal} [signal] aborted once the person has gone on to another view: this one is not drawn
 */
export async function replayView(root, id, signal) {
  replace(root, h("p", { class: "muted" }, "Loading…"));
  document.title = "Replay · context-chat";
  /** @type {any} */ let meta;
  /** @type {any} */ let replay;
  try {
    [meta, replay] = await Promise.all([
      api("GET", `/v1/conversations/${id}`),
      api("GET", `/v1/conversations/${id}/replay`),
    ]);
  } catch (err) {
    if (!signal?.aborted) replace(root, errorLine(err));
    return;
  }
  if (signal?.aborted) return;
  document.title = `Replay · ${meta.title || "New chat"} · context-chat`;
  const s = meta.settings ?? {};
  const est = replay.estimate ?? {};
  const budget = (s.contextWindowTokens ?? 0) - (s.outputReserveTokens ?? 0) || est.budgetTokens;
  const trigger = Math.round(budget * (s.compactTriggerRatio ?? 0.75));
  const ratio = budget ? est.tokens / budget : 0;
  const meter = h("meter", {
    id: "budget-meter",
    min: "0",
    max: String(budget),
    low: String(trigger),
    high: String(Math.round(budget * 0.9)),
    optimum: "0",
    value: String(est.tokens),
  });

  const first = replay.messages[0]?.content;
  const firstText =
    typeof first === "string" ? first : Array.isArray(first) && first[0]?.type === "text" ? first[0].text : "";
  const hasSummary = firstText.startsWith("<conversation_summary>");
  const ctx = newContext();
  ctx.badges = (b) =>
    b.type === "tool_result" && resultText(b.content).startsWith(STUB)
      ? [" ", h("span", { class: "badge stub" }, "stub")]
      : [];
  const messages = replay.messages.map((/** @type {any} */ m, /** @type {number} */ i) => {
    const el = renderMessage(m, ctx);
    const label = hasSummary && i === 0 ? "summary preamble" : hasSummary && i === 1 ? "acknowledgement" : "tail";
    const size = (Array.isArray(m.content) ? m.content : [{ type: "text", text: String(m.content) }]).reduce(
      (/** @type {number} */ n, /** @type {any} */ b) => n + blockChars(b),
      0,
    );
    el.classList.add(label.replace(/ /g, "-"));
    el.querySelector("header")?.append(
      h("span", { class: "badge part" }, label),
      h("span", { class: "size" }, chars(size)),
    );
    return el;
  });
  const system = Array.isArray(replay.system)
    ? replay.system.map((/** @type {any} */ b) => b.text ?? "").join("\n\n")
    : String(replay.system ?? "");

  replace(
    root,
    h(
      "div",
      { class: "replay-view" },
      h(
        "div",
        { class: "chat-head" },
        h("h1", null, "Next request: ", meta.title || id),
        h("nav", null, h("a", { href: `#/c/${id}` }, "Chat"), h("a", { href: `#/c/${id}/history` }, "History")),
      ),
      h(
        "section",
        { class: "panel budget" },
        h(
          "div",
          { class: "budget-line", id: "budget-line" },
          h("strong", null, `${num(est.tokens)} tokens`),
          ` of a ${num(budget)}-token budget (${num(s.contextWindowTokens)} window − ${num(s.outputReserveTokens)} output reserve) · ${(ratio * 100).toFixed(1)}%`,
        ),
        meter,
        est.tokens > trigger
          ? h(
              "p",
              { class: "warn" },
              est.tokens > budget
                ? "Over the budget: the next turn compacts its request in memory before the model call (the stored transcript is not changed)."
                : "Past the compaction trigger: the next turn compacts its request in memory.",
            )
          : null,
        h(
          "dl",
          { class: "facts" },
          h("dt", null, "request"),
          h("dd", null, `${chars(est.chars)} (${est.charsPerToken} chars/token)`),
          h("dt", null, "prefix"),
          h("dd", null, `${chars(est.prefixChars)}: system + ${replay.tools?.length ?? 0} tool schemas`),
          h("dt", null, "messages"),
          h("dd", null, `${num(est.messages ?? replay.messages.length)} · ${chars(est.messageChars)}`),
          h("dt", null, "stubs"),
          h(
            "dd",
            null,
            `${num(est.stubbedResults)} results stubbed, ${chars(est.stubSavedChars)} saved, ${chars(est.stubPendingChars)} waiting for their batch`,
          ),
          h("dt", null, "compaction"),
          h(
            "dd",
            null,
            `a turn compacts past ${num(trigger)} tokens (${Math.round((s.compactTriggerRatio ?? 0.75) * 100)}% of the budget)`,
          ),
          h("dt", null, "fold"),
          h(
            "dd",
            null,
            hasSummary
              ? `summary through #${meta.summarizedThroughMessage} (${chars(meta.summary?.length ?? 0)}); ${chars(meta.foldableChars ?? 0)} foldable of a ${chars(s.foldThresholdChars ?? 0)} threshold`
              : `no summary yet; ${chars(meta.foldableChars ?? 0)} foldable of a ${chars(s.foldThresholdChars ?? 0)} threshold`,
          ),
        ),
      ),
      h(
        "details",
        { class: "panel" },
        h("summary", null, `System prompt (${chars(system.length)})`),
        h("pre", null, system),
      ),
      h(
        "details",
        { class: "panel" },
        h("summary", null, `Tools (${replay.tools?.length ?? 0}, ${chars(JSON.stringify(replay.tools ?? []).length)})`),
        h(
          "ul",
          null,
          (replay.tools ?? []).map((/** @type {any} */ t) =>
            h(
              "li",
              null,
              h("strong", null, t.name),
              " ",
              h("span", { class: "size" }, chars(JSON.stringify(t).length)),
              " ",
              h("span", { class: "muted" }, (t.description ?? "").split("\n")[0]),
            ),
          ),
        ),
      ),
      h("section", { class: "log replay", id: "replay-messages" }, messages),
    ),
  );
}
