// The chat: the recent transcript, then turns streamed over the conversation's websocket (deltas,
// tool calls and results, narration, compaction cards), and attachments dropped onto the page.
import { api, openSocket, uploadAttachment } from "../api.js";
import { bytes, chars, h, num, replace } from "../dom.js";
import { compactionCard, errorLine, modelChangedLine, newContext, refusalLine, renderMessage, runningCompactionCard, thinkingBlock, timelineCard } from "../render.js";
import { pendingCallsPanel } from "./pending-calls.js";

const RECENT = 60;

/** @param {HTMLElement} root @param {string} id @returns {Promise<() => void>} */
export async function chatView(root, id) {
  const ctx = newContext();
  const rendered = new Set();
  const log = h("div", { class: "log", id: "log" });
  const status = h("span", { class: "socket-status", id: "socket-status" }, "connecting…");
  const text = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "composer", rows: "3", placeholder: "Message (Enter sends, Shift+Enter for a new line)", "aria-label": "Message" }));
  const fileInput = /** @type {HTMLInputElement} */ (h("input", { type: "file", id: "file-input", multiple: true, hidden: true }));
  const uploads = h("ul", { class: "uploads", id: "uploads" });
  const title = h("h1", null, id);
  const drop = h("div", { class: "drop-hint", hidden: true }, "Drop files to attach them");
  const form = h(
    "form",
    { class: "composer", id: "composer-form" },
    text,
    h("div", { class: "composer-actions" }, h("button", { type: "button", class: "secondary", onclick: () => fileInput.click() }, "Attach…"), fileInput, h("button", { type: "submit", id: "send" }, "Send")),
  );
  const view = h(
    "div",
    { class: "chat", id: "chat" },
    h("div", { class: "chat-head" }, title, h("nav", null, h("a", { href: `#/c/${id}/history` }, "History"), h("a", { href: `#/c/${id}/replay` }, "Replay"), status)),
    log,
    uploads,
    form,
    drop,
  );
  replace(root, view);

  let closed = false;
  /** @type {WebSocket | null} */
  let ws = null;
  let connecting = /** @type {Promise<WebSocket> | null} */ (null);
  let retry = 0;
  /** Containers created on send, adopted by the next turn_start in order. */
  const pending = /** @type {HTMLElement[]} */ ([]);
  /** @type {Map<string, {el: HTMLElement, stream: HTMLElement | null, thinking: HTMLElement | null, thinkingKey: string, tools: Map<string, HTMLElement>, results: number, saved: any[], cards: {el: HTMLElement, afterResults: number}[], running: HTMLElement | null}>} */
  const turns = new Map();
  let lastTurn = /** @type {string | null} */ (null);
  /** The paused turn whose client tool calls the pending-calls form answers. */
  let pendingFor = /** @type {string | null} */ (null);

  const atBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  /** @param {() => void} fn */
  const stick = (fn) => {
    const was = atBottom();
    fn();
    if (was) log.scrollTop = log.scrollHeight;
  };

  /** @param {any} m */
  function addMessage(m) {
    if (rendered.has(m.id)) return;
    rendered.add(m.id);
    stick(() => {
      const el = renderMessage(m, ctx);
      // Notes and other turns' messages go before any turn still streaming.
      const live = log.querySelector(".turn.live");
      live ? log.insertBefore(el, live) : log.append(el);
    });
  }

  try {
    const meta = await api("GET", `/v1/conversations/${id}`);
    replace(title, meta.title || id);
    const after = Math.max(0, (meta.lastSeq ?? meta.messageCount ?? 0) - RECENT);
    const [page, timeline] = await Promise.all([api("GET", `/v1/conversations/${id}/messages?after=${after}&limit=${RECENT + 20}`), api("GET", `/v1/conversations/${id}/timeline?limit=500`)]);
    if (after > 0) log.append(h("p", { class: "muted" }, `Earlier messages are in `, h("a", { href: `#/c/${id}/history` }, "History"), "."));
    const cards = new Map();
    for (const c of timeline.cards) cards.set(c.afterSeq, [...(cards.get(c.afterSeq) ?? []), c]);
    for (const m of page.messages) {
      addMessage(m);
      for (const c of cards.get(m.seq) ?? []) log.append(timelineCard(c));
    }
    if (!page.messages.length) log.append(h("p", { class: "muted empty" }, "No messages yet. Say something, or drop a file here."));
    if (meta.requiresAction) showPending(meta.requiresAction);
    log.scrollTop = log.scrollHeight;
  } catch (err) {
    replace(root, errorLine(err), h("p", null, h("a", { href: "#/" }, "Back to conversations")));
    return () => {};
  }

  // ---- the socket ---------------------------------------------------------------------------

  function connect() {
    if (ws && ws.readyState === WebSocket.OPEN) return Promise.resolve(ws);
    if (connecting) return connecting;
    replace(status, "connecting…");
    connecting = openSocket(id, onEvent, onClose)
      .then((s) => {
        ws = s;
        retry = 0;
        replace(status, "live");
        status.className = "socket-status live";
        if (everConnected) recover();
        everConnected = true;
        return s;
      })
      .finally(() => (connecting = null));
    return connecting;
  }

  let everConnected = false;
  /** A turn that was streaming when the socket dropped ends without its events: show what was saved. */
  function recover() {
    pending.length = 0;
    for (const [turnId, t] of turns) {
      if (!t.el.classList.contains("live")) continue;
      t.el.classList.replace("live", "interrupted");
      t.el.append(h("div", { class: "muted" }, "The connection dropped during this turn; its saved messages follow."));
      turns.delete(turnId);
    }
    for (const el of log.querySelectorAll(".turn.live")) el.classList.replace("live", "interrupted");
    catchUp().catch(() => {});
  }

  /** @type {ReturnType<typeof setTimeout> | null} */
  let reconnect = null;
  /** A failed connect can report twice (the ticket call or the socket's error, and its close): one retry at a time. */
  function onClose() {
    ws = null;
    status.className = "socket-status";
    replace(status, "disconnected");
    if (closed || reconnect) return;
    // Reconnect with a fresh ticket; tickets are single-use.
    const wait = Math.min(10_000, 500 * 2 ** retry++);
    reconnect = setTimeout(() => {
      reconnect = null;
      if (!closed) connect().catch(() => onClose());
    }, wait);
  }

  /** @param {string} turnId */
  function turnFor(turnId) {
    let t = turns.get(turnId);
    if (!t) {
      const el = pending.shift() ?? h("section", { class: "turn live" });
      el.dataset.turn = turnId;
      if (!el.isConnected) stick(() => log.append(el));
      t = { el, stream: null, thinking: null, thinkingKey: "", tools: new Map(), results: 0, saved: [], cards: [], running: null };
      turns.set(turnId, t);
    }
    lastTurn = turnId;
    return t;
  }

  /** @param {any} e */
  function onEvent(e) {
    if (e.type === "pong") return;
    if (e.type === "message" && e.turnId === "attachment") return addMessage(e.message);
    if (e.type === "progress" && !e.turnId) {
      // Narration from tools outside a turn's own stream (e.g. indexing): show it in the newest turn.
      const t = lastTurn ? turns.get(lastTurn) : null;
      return stick(() => (t ?? { el: log }).el.append(h("div", { class: "progress" }, e.message)));
    }
    if (e.type === "error" && !e.turnId) return stick(() => log.append(errorLine(`${e.error?.type}: ${e.error?.message}`)));
    if (!e.turnId) return;
    const t = turnFor(e.turnId);
    stick(() => {
      switch (e.type) {
        case "turn_start":
          break;
        case "delta": {
          t.thinking = null;
          // A sub-agent's deltas (tagged with `agent`) stream into a bubble of their own.
          const speaker = e.agent ? `agent ${e.agent.name}` : "assistant";
          if (t.stream?.dataset.speaker !== speaker) t.stream = null;
          if (!t.stream) t.el.append((t.stream = h("div", { class: "msg assistant live", "data-speaker": speaker }, h("header", null, h("span", { class: "role" }, speaker)), h("div", { class: "text streaming" }))));
          /** @type {HTMLElement} */ (t.stream.lastElementChild).append(e.text);
          break;
        }
        case "thinking": {
          // One collapsed block per thinking block of the reply; its summary text streams in when shown.
          const key = `${e.agent?.segment ?? ""}:${e.block}`;
          if (t.thinkingKey !== key || !t.thinking) {
            t.stream = null;
            t.thinkingKey = key;
            t.thinking = thinkingBlock(e.redacted ? null : "");
            t.thinking.classList.add("live");
            t.el.append(t.thinking);
          }
          if (e.text) {
            let body = t.thinking.querySelector(".thinking-text");
            if (!body) {
              const tag = t.thinking.querySelector(".tag");
              if (tag) tag.textContent = "thinking";
              t.thinking.append((body = h("div", { class: "thinking-text" })));
            }
            body.append(e.text);
          }
          break;
        }
        case "refusal":
          t.stream = null;
          t.el.append(refusalLine(e));
          break;
        case "model_changed":
          t.el.append(modelChangedLine(e));
          break;
        case "retry":
          t.stream = null;
          t.el.append(h("div", { class: "progress" }, `The model's reply broke off (${e.error?.type}); asking again in ${Math.round(e.delayMs / 100) / 10} s. What it had written is kept.`));
          break;
        case "tool_use": {
          t.stream = null;
          // The thinking right before a call is the model's note of what it is about to do: open it.
          if (t.thinking?.querySelector(".thinking-text")) t.thinking.setAttribute("open", "");
          t.thinking = null;
          ctx.toolNames.set(e.id, e.name);
          const input = JSON.stringify(e.input ?? {}, null, 2);
          const el = h("details", { class: "tool-use running", "data-tool-use": e.id }, h("summary", null, h("span", { class: "tag" }, "tool call"), " ", h("strong", null, e.name), " ", h("span", { class: "size" }, chars(input.length)), h("span", { class: "muted" }, " running…")), h("pre", null, input));
          t.tools.set(e.id, el);
          t.el.append(el);
          break;
        }
        case "tool_result": {
          const call = t.tools.get(e.tool_use_id);
          call?.classList.remove("running");
          call?.querySelector("summary .muted")?.remove();
          const el = h(
            "details",
            { class: `tool-result${e.is_error ? " error" : ""}`, "data-tool-result": e.tool_use_id },
            h("summary", null, h("span", { class: "tag" }, e.is_error ? "error result" : "result"), " ", h("strong", null, e.name), " ", h("span", { class: "size" }, chars(e.chars))),
            h("pre", null, e.preview, e.chars > e.preview.length ? h("span", { class: "muted" }, `\n… ${chars(e.chars - e.preview.length)} more (in the saved message)`) : null),
          );
          call ? call.after(el) : t.el.append(el);
          t.results++;
          t.stream = null;
          break;
        }
        case "progress":
          t.el.append(h("div", { class: "progress" }, e.message));
          break;
        case "compaction_started":
          t.stream = null;
          t.running = runningCompactionCard(e);
          t.el.append(t.running);
          break;
        case "compaction": {
          const card = compactionCard(e);
          if (t.running) t.running.replaceWith(card);
          else t.el.append(card);
          t.running = null;
          t.cards.push({ el: card, afterResults: t.results });
          t.stream = null;
          break;
        }
        case "message":
          t.saved.push(e.message);
          break;
        case "error":
          t.el.append(errorLine(`${e.error?.type}: ${e.error?.message}`));
          break;
        case "requires_action":
          showPending(e);
          break;
        case "turn_end":
          finish(t, e);
          // A paused turn goes on under the same id: its second half gets a section of its own.
          if (e.stop_reason === "requires_action") turns.delete(e.turnId);
          else if (e.turnId === pendingFor) hidePending();
          break;
      }
    });
  }

  /**
   * The streamed view gives way to the messages as saved. A compaction card stays where its pass
   * ran: after the message holding the tool results seen before it (after the prompt if none).
   */
  function finish(/** @type {any} */ t, /** @type {any} */ e) {
    const kept = [...t.el.querySelectorAll(".error-line")];
    const narration = [...t.el.querySelectorAll(".progress")];
    const out = [];
    let results = 0;
    const cards = [...t.cards];
    t.saved.forEach((/** @type {any} */ m) => {
      // Already shown when a dropped connection was caught up from the transcript.
      if (!rendered.has(m.id)) out.push(renderMessage(m, ctx));
      rendered.add(m.id);
      results += (Array.isArray(m.content) ? m.content : []).filter((/** @type {any} */ b) => b.type === "tool_result").length;
      while (cards.length && cards[0].afterResults <= results) out.push(/** @type {any} */ (cards.shift()).el);
    });
    out.push(...cards.map((c) => c.el));
    if (!t.saved.length) out.push(...t.el.children);
    const u = e.usage ?? {};
    if (narration.length && t.saved.length) out.push(h("details", { class: "narration" }, h("summary", { class: "muted" }, `${narration.length} progress note${narration.length === 1 ? "" : "s"}`), narration));
    out.push(...kept, h("div", { class: "turn-end muted" }, `${e.stop_reason} · input ${num((u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0))} tokens (${num(u.cache_read_input_tokens)} cached) · output ${num(u.output_tokens)}`, e.timing ? ` · ${num(e.timing.serverMs)} ms` : ""));
    replace(t.el, out);
    t.el.classList.remove("live");
    t.el.classList.add("done");
  }

  // ---- client tool calls a paused turn waits on ----------------------------------------------

  /** @param {any} action */
  function showPending(action) {
    hidePending();
    pendingFor = action.turnId;
    form.before(
      pendingCallsPanel(action, async (results) => {
        try {
          (await connect()).send(JSON.stringify({ type: "tool_results", results }));
        } catch (err) {
          stick(() => log.append(errorLine(err)));
        }
      }),
    );
  }
  function hidePending() {
    view.querySelector("#pending-calls")?.remove();
    pendingFor = null;
  }

  // ---- sending ------------------------------------------------------------------------------

  async function send() {
    const content = text.value;
    if (!content.trim()) return;
    log.querySelector(".empty")?.remove();
    const el = h("section", { class: "turn live" }, renderMessage({ role: "user", content: [{ type: "text", text: content }] }, ctx, { live: true }));
    try {
      const s = await connect();
      pending.push(el);
      stick(() => log.append(el));
      s.send(JSON.stringify({ type: "send", content }));
      text.value = "";
    } catch (err) {
      stick(() => log.append(errorLine(err)));
    }
  }
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    send();
  });
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });

  // ---- attachments --------------------------------------------------------------------------

  /** @param {File} file */
  async function upload(file) {
    const bar = /** @type {HTMLProgressElement} */ (h("progress", { max: "1", value: "0" }));
    const label = h("span", { class: "muted" }, bytes(file.size));
    const row = h("li", { class: "upload" }, h("strong", null, file.name), " ", bar, " ", label);
    uploads.append(row);
    const { done } = uploadAttachment(id, file, (sent, total) => {
      bar.max = total || 1;
      bar.value = sent;
      replace(label, `${bytes(sent)} of ${bytes(total)}`);
    });
    try {
      const att = await done;
      bar.value = bar.max;
      row.classList.add("done");
      replace(label, `${bytes(att.size ?? file.size)} · uploaded · `, h("code", null, att.id));
      // The note reaches the log over the socket; fetch it if the socket missed it.
      setTimeout(() => catchUp().catch(() => {}), 1500);
      setTimeout(() => row.remove(), 8000);
    } catch (err) {
      row.classList.add("failed");
      replace(label, errorLine(err));
    }
  }

  async function catchUp() {
    if (log.querySelector(".turn.live")) return;
    const seqs = [...log.querySelectorAll("[data-seq]")].map((el) => Number(/** @type {HTMLElement} */ (el).dataset.seq));
    const after = seqs.length ? Math.max(...seqs) : 0;
    const page = await api("GET", `/v1/conversations/${id}/messages?after=${after}&limit=100`);
    for (const m of page.messages) addMessage(m);
  }

  /** @param {FileList | File[] | null | undefined} files */
  const uploadAll = (files) => [...(files ?? [])].forEach((f) => upload(f));
  fileInput.addEventListener("change", () => {
    uploadAll(fileInput.files);
    fileInput.value = "";
  });
  let depth = 0;
  view.addEventListener("dragenter", (e) => {
    if (!e.dataTransfer?.types.includes("Files")) return;
    e.preventDefault();
    depth++;
    drop.hidden = false;
  });
  view.addEventListener("dragover", (e) => e.preventDefault());
  view.addEventListener("dragleave", () => {
    if (--depth <= 0) (depth = 0), (drop.hidden = true);
  });
  view.addEventListener("drop", (e) => {
    e.preventDefault();
    depth = 0;
    drop.hidden = true;
    uploadAll(e.dataTransfer?.files);
  });

  connect().catch(() => onClose());
  text.focus();
  return () => {
    closed = true;
    if (reconnect) clearTimeout(reconnect);
    ws?.close();
  };
}
