// The chat: the recent transcript as turns (turns.js), then turns streamed over the conversation's
// websocket. While a turn runs, Send becomes Stop (the `stop` frame ends it as interrupted) and a
// waiting line shows until the first token; replies render as markdown as they stream. Messages
// carry Copy, Edit (resend), Regenerate (replaces the last reply: the API supersedes the earlier
// one, which stays a step back in the reply's ‹ n / N › versions) and Retry (a failed turn, or a last
// turn with no reply). Picked files are staged as
// chips and uploaded on Send, then sent with the message as its `attachments`.
import { ApiError, api, openSocket, plainError, readable, session, uploadAttachment, watchSocket } from "../api.js";
import { bytes, h, replace } from "../dom.js";
import { copyText, renderMarkdownOrText } from "../markdown.js";
import { announce, conversationsChanged } from "../prefs.js";
import { errorLine, modelChangedLine, refusalLine, thinkingBlock, timelineCard } from "../render.js";
import {
  assistantBlock,
  compactionNotice,
  fillStep,
  groupTurns,
  isPrompt,
  noteChip,
  promptText,
  replyText,
  toolStep,
  userMessage,
} from "../turns.js";
import { pendingCallsPanel } from "./pending-calls.js";

const RECENT = 60;
/** How long to wait before each look for the server's automatic title after the first exchange. */
const TITLE_CHECKS_MS = [300, 700, 1_500, 3_000, 5_000];
const MAX_UPLOAD = 1024 * 1024 * 1024;

/**
 * @param {HTMLElement} root @param {string} id
 * @param {{ firstMessage?: string }} [opts] a new chat's first message, sent once the socket is up
 * @returns {Promise<() => void>}
 */
export async function chatView(root, id, opts = {}) {
  /** Every message shown, in seq order (the settled part of the log is rendered from it). */
  /** @type {any[]} */
  const messages = [];
  /** @type {Map<number, any[]>} timeline cards by the seq they follow */
  const cards = new Map();
  /** Failed turns: the prompt's message id → the error. @type {Map<string, any>} */
  const errors = new Map();
  /** This session's turns stopped before the model's first token (nothing of the reply saved), by the prompt's id. */
  const stoppedEarly = new Set();
  /**
   * Files staged for the next message: uploaded when it is sent (`abort` while it goes up; `id` once
   * it is up, so a Send that failed on a later file does not upload it again).
   * @typedef {{ file: File, row: HTMLElement, abort?: () => void, id?: string }} Staged
   */
  /** @type {Staged[]} */
  const staged = [];
  /** The files each of this page's sends carried (put back as chips if the server never takes it). @type {WeakMap<HTMLElement, Staged[]>} */
  const sentFiles = new WeakMap();
  /**
   * The idempotencyKey of each message put back into the composer (lost with the socket, or left
   * unsent), by its text, with the files it carried: sent again as it was, it goes with the same
   * key, so a send the server had taken after all is answered as that turn, never run twice.
   * @type {Map<string, { key: string, files: string }>}
   */
  const resendKeys = new Map();
  /** Progress notes of this session's turns, by the prompt's message id. @type {Map<string, string[]>} */
  const narration = new Map();
  /** The category of each refusal this session saw, by the refused reply's message id (a reload has none). @type {Map<string, string | null>} */
  const refusals = new Map();
  const settled = h("div", { class: "settled" });
  const log = h(
    "div",
    { class: "log", id: "log", role: "log", "aria-live": "off", "aria-label": "Conversation", tabindex: "0" },
    settled,
  );
  const text = /** @type {HTMLTextAreaElement} */ (
    h("textarea", {
      id: "composer",
      rows: "1",
      placeholder: "Message",
      "aria-label": "Message",
      enterkeyhint: "send",
      dir: "auto",
    })
  );
  const fileInput = /** @type {HTMLInputElement} */ (
    h("input", { type: "file", id: "file-input", multiple: true, hidden: true })
  );
  const uploads = h("ul", { class: "uploads", id: "uploads", "aria-label": "Attached files" });
  const title = h("h1", { id: "chat-title" }, "…");
  const banner = h("div", { class: "banner", id: "conn-banner", hidden: true, role: "status" });
  const status = h("span", { class: "socket-status dev-only", id: "socket-status" }, "connecting");
  const sendButton = h("button", { type: "submit", id: "send", class: "primary" }, "Send");
  const stopButton = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", id: "stop", class: "danger", hidden: true }, "Stop")
  );
  const form = h(
    "form",
    { class: "composer", id: "composer-form" },
    uploads,
    h(
      "div",
      { class: "composer-row" },
      h(
        "button",
        {
          type: "button",
          class: "ghost attach",
          "aria-label": "Attach files",
          title: "Attach files",
          onclick: () => fileInput.click(),
        },
        "+",
      ),
      fileInput,
      text,
      sendButton,
      stopButton,
    ),
    h("p", { class: "hint" }, "Enter sends · Shift+Enter adds a line"),
  );
  const drop = h("div", { class: "drop-hint", hidden: true }, "Drop files to attach them");
  const view = h(
    "div",
    { class: "chat", id: "chat" },
    h(
      "div",
      { class: "chat-head" },
      title,
      h(
        "nav",
        { "aria-label": "This conversation" },
        h("a", { href: `#/c/${id}/history` }, "History"),
        h("a", { class: "dev-only", href: `#/c/${id}/replay` }, "Replay"),
        h("a", { href: `#/c/${id}/settings` }, "Settings"),
        status,
      ),
    ),
    banner,
    log,
    form,
    drop,
  );
  replace(root, view);

  let closed = false;
  /** @type {WebSocket | null} */
  let ws = null;
  /** @type {Promise<WebSocket> | null} */
  let connecting = null;
  let retry = 0;
  /** @type {any} */
  let meta = null;
  /**
   * Live turns by turnId; `pending` holds sections made on send, each adopted by the turn the server
   * said it became (`accepted`, for the send's `ref`): another client's turn starting meanwhile is
   * drawn as its own.
   */
  /** @type {HTMLElement[]} */
  const pending = [];
  /**
   * `thoughts`: the thinking sections streamed since the turn's last saved reply, named after it
   * (`data-thinking`) when it is saved, as the transcript names them. `refusal`: the turn's last
   * refusal event (its category goes with the saved reply's notice).
   * @type {Map<string, {el: HTMLElement, body: HTMLElement, waiting: HTMLElement | null, piece: {el: HTMLElement, text: string, agent: string} | null, thinking: HTMLElement | null, thinkingKey: string, thoughts: HTMLElement[], steps: Map<string, HTMLElement>, saved: any[], error: any, refusal: any, prompt: string, started: boolean}>}
   */
  const turns = new Map();
  /** The turn this page started and is running: Stop ends it. */
  let running = /** @type {string | null} */ (null);
  let stopRequested = false;
  /** A Stop pressed while the socket was down: the turn it was for, stopped once the socket is back. */
  let stopOnReturn = /** @type {string | null} */ (null);
  /** The paused turn whose client tool calls the pending-calls form answers. */
  let pendingFor = /** @type {string | null} */ (null);
  /** After a reconnect: the paused turn whose calls the resumed socket must name again, or its panel goes. */
  let pendingRecheck = /** @type {string | null} */ (null);
  /**
   * The results posted and not yet answered: told true when the turn goes on (its `turn_start`),
   * false when the server refused them or still waits for them (its calls named again).
   * @type {((taken: boolean) => void) | null}
   */
  let resultsPosted = null;
  /** @param {boolean} taken */
  const resultsAnswered = (taken) => {
    resultsPosted?.(taken);
    resultsPosted = null;
  };

  const atBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  /** @param {() => void} fn */
  const stick = (fn) => {
    const was = atBottom();
    fn();
    if (was) log.scrollTop = log.scrollHeight;
  };

  // ---- the settled transcript -------------------------------------------------------------

  /** The prompt being edited, with what was typed so far: a re-render opens its editor again. @type {{ id: string, original: string, draft?: string } | null} */
  let editing = null;

  /** The reply version picked on each regenerated turn, by its prompt's id (the latest when absent). @type {Map<string, number>} */
  const pickedVersion = new Map();

  function renderSettled() {
    // Superseded messages (a regenerate replaced their exchange) are not shown as turns: the
    // replies they held are the earlier versions of the exchange that replaced them.
    /** @type {Map<string, any[]>} the superseded messages by the user message that replaced them */
    const replaced = new Map();
    for (const m of messages)
      if (m.superseded && m.supersededBy) replaced.set(m.supersededBy, [...(replaced.get(m.supersededBy) ?? []), m]);
    /** The replies an exchange replaced, oldest first, following earlier regenerates too. @param {string} id @returns {any[][]} */
    const versionsBefore = (id) => {
      const group = replaced.get(id) ?? [];
      const prompt = group.find((m) => m.role === "user" && promptText(m));
      const replies = group.filter((m) => m !== prompt && m.role === "assistant");
      return [...(prompt ? versionsBefore(prompt.id) : []), ...(replies.length ? [replies] : [])];
    };
    const items = groupTurns(messages.filter((m) => !m.superseded));
    for (const item of items)
      if (item.kind === "turn" && item.user) item.earlier.unshift(...versionsBefore(item.user.id));
    /** @type {Node[]} */
    const out = [];
    // The server regenerates the last prompt's exchange: Regenerate belongs to the last turn, and
    // only when it has a reply, or earlier ones (a regenerate stopped before its reply). A last turn
    // without either (failed, or stopped before its first token) offers Retry, which sends its
    // prompt again. A turn still running (its prompt saved, its reply streaming) offers neither.
    const lastTurn = [...items].reverse().find((i) => i.kind === "turn" && i.user);
    const answered = (/** @type {any} */ i) => i.replies.length || i.earlier.length;
    const live = turns.size > 0 || running !== null;
    for (const item of items) {
      if (item.kind === "note") {
        out.push(noteChip(item.message));
        out.push(...(cards.get(item.message.seq) ?? []).map(cardView));
        continue;
      }
      const section = h("section", { class: "turn done" });
      if (item.user) section.append(withUserActions(userMessage(item.user), item.user));
      if (answered(item)) section.append(replyView(item, item === lastTurn));
      const notes = item.user && narration.get(item.user.id);
      if (notes?.length)
        section.append(
          h(
            "details",
            { class: "narration" },
            h("summary", null, `${notes.length} progress note${notes.length === 1 ? "" : "s"}`),
            notes.map((/** @type {string} */ n) => h("div", { class: "progress" }, n)),
          ),
        );
      const failed = item.user && errors.get(item.user.id);
      const retryHere = item === lastTurn && !answered(item) && !live;
      if (failed) section.append(turnError(failed, promptText(item.user), { retry: retryHere }));
      else if (item.user && !answered(item) && (retryHere || stoppedEarly.has(item.user.id)))
        section.append(noReply(item.user, retryHere));
      for (const m of [item.user, ...item.replies]) if (m) section.append(...(cards.get(m.seq) ?? []).map(cardView));
      out.push(section);
    }
    if (!items.length && !staged.length) out.push(h("p", { class: "empty" }, "Ask anything, or attach a file."));
    const place = readerPlace(settled);
    stick(() => replace(settled, out));
    restorePlace(place);
  }

  /**
   * A stable name for an element of the log, the same after the transcript is drawn again: a tool
   * step's call id, a thinking section's message id and place among the message's thinking, else its message's id (or, outside a message, its turn's first one) with its
   * tag, classes and place among its like.
   * @param {Element} el @returns {string}
   */
  function placeKey(el) {
    if (el instanceof HTMLElement && el.dataset.toolUse) return `step:${el.dataset.toolUse}`;
    if (el instanceof HTMLElement && el.dataset.thinking) return `thinking:${el.dataset.thinking}`;
    if (el.tagName === "SUMMARY" && el.parentElement) return `summary:${placeKey(el.parentElement)}`;
    const msg = el.closest("[data-id], [data-ids]");
    const box = msg ?? el.closest(".turn");
    const owner = msg ?? box?.querySelector("[data-id], [data-ids]");
    const id = owner?.getAttribute("data-id") ?? owner?.getAttribute("data-ids")?.split(" ")[0] ?? "";
    const like = `${el.tagName}${[...el.classList].map((c) => `.${CSS.escape(c)}`).join("")}`;
    const at = [...(box ?? settled).querySelectorAll(like)].indexOf(el);
    return `${id}|${msg ? "msg" : "turn"}|${like}|${at}`;
  }

  /** What a re-render would lose under `root`: the focused control and the opened details. @param {HTMLElement} root */
  function readerPlace(root) {
    const active = document.activeElement;
    const focus = active && active !== root && root.contains(active) ? placeKey(active) : null;
    const open = new Set([...root.querySelectorAll("details[open]")].map(placeKey));
    return { focus, open };
  }

  /**
   * After a re-render: the details that were open open again, and the focus goes back to the same
   * control (or, when it is gone, to the composer rather than the top of the page).
   * @param {{ focus: string | null, open: Set<string> }} place
   */
  function restorePlace({ focus, open }) {
    if (open.size)
      for (const d of settled.querySelectorAll("details"))
        if (open.has(placeKey(d))) /** @type {HTMLDetailsElement} */ (d).open = true;
    if (focus === null) return;
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return;
    const again = [...settled.querySelectorAll("button, summary, a[href], textarea, [tabindex]")].find(
      (el) => placeKey(el) === focus,
    );
    /** @type {HTMLElement} */ (again ?? text).focus({ preventScroll: true });
  }

  /** @param {any} c a timeline card */
  const cardView = (c) => (c.type === "compaction" ? compactionNotice(c.card, c.at) : timelineCard(c));

  /** @param {HTMLElement} el @param {any} m */
  function withUserActions(el, m) {
    const actions = /** @type {HTMLElement} */ (el.querySelector(".actions"));
    const copy = h("button", { type: "button", class: "ghost copy", "aria-label": "Copy message" }, "Copy");
    copy.addEventListener("click", () => copyText(promptText(m), copy));
    const edit = h("button", { type: "button", class: "ghost edit", "aria-label": "Edit and resend" }, "Edit");
    edit.addEventListener("click", () => editPrompt(el, { id: m.id, original: promptText(m) }));
    actions.append(copy, edit);
    if (editing?.id === m.id) queueMicrotask(() => editing && editPrompt(el, editing));
    return el;
  }

  /**
   * A turn's reply. After a regenerate it is one version at a time, the latest first, with
   * ‹ n / N › to step through the earlier ones (the API keeps them, marked superseded, and never
   * replays them to the model); the version picked stays picked across re-renders.
   * @param {any} item @param {boolean} last
   */
  function replyView(item, last) {
    /** @type {any[][]} */
    const versions = [...item.earlier, item.replies];
    if (versions.length === 1)
      return withReplyActions(assistantBlock(item.replies, { refusals }), { item, last, shown: item.replies });
    const key = item.user?.id ?? "";
    const latest = versions.length - 1;
    /** @param {number} i @param {string} [focus] the step button to focus in the new block */
    const version = (i, focus) => {
      pickedVersion.set(key, i);
      const shown = versions[i];
      const el = withReplyActions(assistantBlock(shown, { refusals }), { item, last, shown });
      const step = (
        /** @type {string} */ cls,
        /** @type {number} */ to,
        /** @type {string} */ label,
        /** @type {string} */ glyph,
      ) => {
        const b = h("button", { type: "button", class: `ghost ${cls}`, "aria-label": label }, glyph);
        if (to < 0 || to > latest) b.setAttribute("disabled", "");
        else b.addEventListener("click", () => el.replaceWith(version(to, cls)));
        return b;
      };
      const nav = h(
        "span",
        { class: "reply-versions", role: "group", "aria-label": "Reply versions" },
        step("prev-version", i - 1, "Previous version", "‹"),
        h("span", { class: "version-count", "aria-live": "polite" }, `${i + 1} / ${versions.length}`),
        step("next-version", i + 1, "Next version", "›"),
      );
      /** @type {HTMLElement} */ (el.querySelector(".actions")).prepend(nav);
      if (!shown.length)
        el.prepend(
          h(
            "p",
            { class: "version-note" },
            "No reply: this regenerate was stopped or failed before the model answered.",
          ),
        );
      else if (shown.some((m) => m.superseded))
        el.prepend(
          h(
            "p",
            { class: "version-note" },
            "An earlier reply, replaced by a regenerate: kept, but no longer sent to the model.",
          ),
        );
      // Keyboard focus stays on the step control (the other one when this end disables it).
      const focusable = () =>
        nav.querySelector(`.${focus}:not([disabled])`) ?? nav.querySelector("button:not([disabled])");
      if (focus) queueMicrotask(() => /** @type {HTMLElement | null} */ (focusable())?.focus());
      return el;
    };
    const picked = pickedVersion.get(key);
    return version(picked !== undefined && picked <= latest ? picked : latest);
  }

  /** @param {HTMLElement} el @param {{ item: any, last: boolean, shown: any[] }} reply the turn, whether it is the last, and the version shown */
  function withReplyActions(el, { item, last, shown }) {
    const actions = /** @type {HTMLElement} */ (el.querySelector(".actions"));
    const copy = h("button", { type: "button", class: "ghost copy", "aria-label": "Copy reply" }, "Copy");
    copy.addEventListener("click", () => copyText(replyText(shown), copy));
    if (shown.length) actions.append(copy);
    if (last && item.user) {
      const again = h(
        "button",
        { type: "button", class: "ghost regenerate", id: "regenerate", "aria-label": "Regenerate reply" },
        "Regenerate",
      );
      // A prompt without words (an image, a file) is named while its new reply comes.
      const blocks = Array.isArray(item.user.content) ? item.user.content : [];
      const label = blocks.some((/** @type {any} */ b) => b.type === "image") ? "[image]" : "[file]";
      again.addEventListener("click", () => sendTurn(promptText(item.user), { regenerate: true, label }));
      actions.append(again);
    }
    return el;
  }

  /**
   * Edit-and-resend: the prompt becomes an editor; sending it starts a new turn. While a turn runs
   * the editor stays open (with a word why), and a re-render of the transcript opens it again with
   * what was typed (`editing`), so an edit is never lost.
   * @param {HTMLElement} el @param {{ id: string, original: string, draft?: string }} edit
   */
  function editPrompt(el, edit) {
    const box = /** @type {HTMLTextAreaElement} */ (
      h("textarea", { class: "edit-box", "aria-label": "Edit message", rows: "3", dir: "auto" })
    );
    box.value = edit.draft ?? edit.original;
    editing = { ...edit, draft: box.value };
    box.addEventListener("input", () => editing && (editing.draft = box.value));
    const bubble = /** @type {HTMLElement} */ (el.querySelector(".bubble"));
    // Cancel (or Escape) closes the editor and gives the focus back to the message's Edit.
    const close = () => {
      editing = null;
      editor.replaceWith(bubble);
      /** @type {HTMLElement | null} */ (el.querySelector("button.edit"))?.focus();
    };
    const resend = () => {
      if (!box.value.trim()) return;
      if (running) return announce("A reply is still running: send your edit when it ends, or stop it.");
      const content = box.value;
      close();
      sendTurn(content);
    };
    const editor = h(
      "div",
      { class: "editor" },
      box,
      h(
        "div",
        { class: "editor-actions" },
        h("button", { type: "button", class: "ghost", onclick: close }, "Cancel"),
        h("button", { type: "button", class: "primary resend", onclick: resend }, "Send"),
      ),
    );
    editor.addEventListener("keydown", (e) => {
      if (e.key !== "Escape") return;
      // Escape here cancels the edit, not the running turn.
      e.stopPropagation();
      close();
    });
    bubble.replaceWith(editor);
    box.focus();
  }

  /**
   * A failed turn's error in plain words, with Retry when trying again may help, or when it is the
   * last turn and has no reply (`retry`), with the files the message had uploaded (`files`, when it
   * never reached the server).
   * @param {any} error @param {string} prompt @param {{ files?: Staged[], retry?: boolean }} [opts]
   */
  function turnError(error, prompt, { files = [], retry = false } = {}) {
    const plain = plainError(error);
    const details =
      error.message && plain.text !== error.message
        ? h(
            "details",
            { class: "dev-only" },
            h("summary", null, "Details"),
            h("pre", null, `${error.type}: ${error.message}`),
          )
        : null;
    const retryButton =
      (plain.retry || retry) && prompt
        ? h("button", { type: "button", class: "retry", onclick: () => sendTurn(prompt, { files }) }, "Retry")
        : null;
    // Announced once, through the status line, when it happens (not as an alert each time the
    // transcript is drawn again).
    return h("div", { class: "turn-error" }, h("span", null, plain.text), retryButton, details);
  }

  /**
   * A turn with no reply and no error to show: stopped before the model's first token (nothing of
   * the reply is saved then), or, drawn from the server, stopped or failed. As the last turn it
   * offers Retry (its prompt sent again): Regenerate would be refused, there being no reply.
   * @param {any} prompt the turn's user message @param {boolean} retry
   */
  function noReply(prompt, retry) {
    const text = promptText(prompt);
    return h(
      "div",
      { class: "no-reply" },
      h(
        "span",
        { class: "stopped-note" },
        stoppedEarly.has(prompt.id) ? "Stopped" : "No reply: stopped or failed before the model answered.",
      ),
      retry && text.trim()
        ? h("button", { type: "button", class: "retry", onclick: () => sendTurn(text) }, "Retry")
        : null,
    );
  }

  // ---- loading ------------------------------------------------------------------------------

  try {
    meta = await api("GET", `/v1/conversations/${id}`);
    replace(title, meta.title || "New chat");
    document.title = `${meta.title || "New chat"} · context-chat`;
    const after = Math.max(0, (meta.lastSeq ?? meta.messageCount ?? 0) - RECENT);
    const [page, timeline] = await Promise.all([
      api("GET", `/v1/conversations/${id}/messages?after=${after}&limit=${RECENT + 20}`),
      api("GET", `/v1/conversations/${id}/timeline?limit=500`),
    ]);
    for (const c of timeline.data) cards.set(c.afterSeq, [...(cards.get(c.afterSeq) ?? []), c]);
    messages.push(...page.data);
    if (after > 0)
      log.prepend(
        h("p", { class: "muted" }, "Earlier messages are in ", h("a", { href: `#/c/${id}/history` }, "History"), "."),
      );
    renderSettled();
    if (meta.requiresAction) showPending(meta.requiresAction);
    log.scrollTop = log.scrollHeight;
  } catch (err) {
    // A refused key has already brought the sign-in form up: leave it there.
    if (!session.key) return () => {};
    replace(root, errorLine(plainError(err).text), h("p", null, h("a", { href: "#/" }, "Start a new chat")));
    return () => {};
  }

  // ---- the socket ---------------------------------------------------------------------------

  let everConnected = false;
  /**
   * Whether the socket has sent its `resumed` frame (the page always connects with `after`): the
   * frames before it are its catch-up, a paused turn's calls among them, which say nothing of a
   * results post made meanwhile.
   */
  let caughtUp = false;
  /** Counts the page's connections; `resultsOn`: the one the unanswered results post went out on. */
  let connection = 0;
  let resultsOn = 0;
  /** The last connection the heartbeat gave up: what its socket still sends (a late `close`) is not heard. */
  let abandoned = 0;
  /** The heartbeat on the open socket (api.js watchSocket). @type {{ stop: () => void, waiting: () => boolean } | null} */
  let watch = null;
  function connect() {
    // Left: no socket is opened for a view no longer shown (it would act on the page: its title, its sends).
    if (closed) return Promise.reject(new ApiError(0, "socket_error", "This chat was left."));
    if (ws && ws.readyState === WebSocket.OPEN) return Promise.resolve(ws);
    if (connecting) return connecting;
    caughtUp = false;
    const mine = ++connection;
    // Resumed after what the page shows: what was saved meanwhile, and a turn running now.
    const after = messages.length ? messages[messages.length - 1].seq : 0;
    const heard = () => mine > abandoned;
    connecting = openSocket(
      id,
      (e) => heard() && onEvent(e),
      () => heard() && onClose(),
      after,
    )
      .then((s) => {
        // The chat was left while its socket opened: the cleanup found no socket to close, so it goes here.
        if (closed) {
          s.close();
          throw new ApiError(0, "socket_error", "This chat was left.");
        }
        ws = s;
        watch?.stop();
        watch = watchSocket(s, () => giveUp(s, mine));
        retry = 0;
        banner.hidden = true;
        view.classList.remove("offline");
        replace(status, "connected");
        status.classList.add("live");
        if (everConnected) recover();
        everConnected = true;
        return s;
      })
      .finally(() => (connecting = null));
    return connecting;
  }

  /**
   * After a reconnect: turns that were streaming show what was saved, and the one still running
   * comes back from the socket (its `turn_start` marked resumed, then the reply so far), with
   * Stop. A message sent just before
   * the socket dropped (no turn_start came for it) goes back into the composer when the server
   * never saved it, so nothing typed is lost; one it saved shows as saved. One the server had named
   * (its `accepted`) waits for the resumed socket: named again (its turn still queued or running),
   * it is followed as this page's; else it is told lost once the socket has caught up. A message
   * put back keeps its idempotencyKey: sent again, a send the server had taken is that same turn.
   */
  function recover() {
    // Named before the drop: kept, for the resumed socket's `turn_queued` / `turn_start` to take.
    for (const el of pending) if (el.dataset.for) el.dataset.resuming = "1";
    const lost = pending.filter((el) => !el.dataset.resuming);
    pending.splice(0, pending.length, ...pending.filter((el) => el.dataset.resuming));
    for (const el of lost) el.remove();
    for (const [, t] of turns) t.el.remove();
    turns.clear();
    // A send still uploading its files goes on (it sends over the new socket): it keeps Stop. One
    // already sent (in `pending`) either comes back from the resumed socket or is told lost below.
    // (A Stop pressed while the socket was down is kept apart, in `stopOnReturn`.)
    if (running !== "pending" || (lost.length && !pending.length)) setRunning(null);
    resumedAfter = messages.length ? messages[messages.length - 1].seq : 0;
    // A paused turn's panel stays (with what was typed in it) if the resumed socket sends its calls
    // again; if they were answered meanwhile, it goes when the socket says it has caught up.
    pendingRecheck = pendingFor;
    const before = messages.length;
    catchUp()
      .catch(() => {})
      .then(() => {
        const saved = new Set(messages.slice(before).map((m) => promptText(m)));
        // A regenerate lost this way sends nothing to restore: Regenerate is still offered.
        const unsent = lost.filter(
          (el) => !el.dataset.regenerate && el.dataset.prompt && !saved.has(el.dataset.prompt),
        );
        if (!unsent.length) return;
        putBack(unsent);
        announce("The connection dropped before your message was sent: it is back in the box.");
      });
  }

  /** The last seq the page showed when its socket dropped (what the resumed socket saved after it is new). */
  let resumedAfter = 0;
  /**
   * The resumed socket has caught up: a named send it did not name again (its turn is over, or
   * was never kept) is lost as `recover` tells lost ones, unless its prompt was saved meanwhile.
   */
  function unclaimedAfterResume() {
    const gone = pending.filter((el) => el.dataset.resuming);
    if (!gone.length) return;
    for (const el of gone) {
      pending.splice(pending.indexOf(el), 1);
      el.remove();
    }
    if (running === "pending" && !pending.length) setRunning(null);
    const saved = new Set(messages.filter((m) => m.seq > resumedAfter).map((m) => promptText(m)));
    const unsent = gone.filter((el) => !el.dataset.regenerate && el.dataset.prompt && !saved.has(el.dataset.prompt));
    if (!unsent.length) return;
    putBack(unsent);
    announce("The connection dropped before your message was sent: it is back in the box.");
  }

  /**
   * This page's send, repeated with its idempotencyKey, answered `idempotency_in_progress`: the
   * send the server took before a drop is still queued or running as `e.turnId`. Not an error: that
   * turn is this message's, followed (and stoppable) as the page's own.
   * @param {any} e
   */
  function ownTurn(e) {
    const el = pending.find((p) => p.dataset.ref === e.ref);
    if (!el) return;
    const t = turns.get(e.turnId);
    if (!t) {
      // Not drawn yet: its events take this section, as an `accepted` turn's do.
      el.dataset.for = e.turnId;
      if (stopRequested && running === "pending") stop();
      return;
    }
    // Already drawn as another's (its `turn_queued`, or `turn_start`, came first): it is this page's.
    pending.splice(pending.indexOf(el), 1);
    el.remove();
    Object.assign(t.el.dataset, { mine: "1", ref: el.dataset.ref, prompt: el.dataset.prompt ?? "" });
    sentFiles.set(t.el, sentFiles.get(el) ?? []);
    t.prompt = el.dataset.prompt ?? "";
    const asked = el.querySelector(".msg.user");
    if (asked && !t.el.querySelector(".msg.user")) t.el.prepend(asked);
    if (t.started) setRunning(e.turnId);
    else if (stopRequested && running === "pending") stop();
  }

  /**
   * A socket the heartbeat found dead (half-open: a ping nothing answered): closed and dropped now,
   * not when its `close` comes (minutes late, if ever), then reconnected as after any drop.
   * @param {WebSocket} s @param {number} n its connection
   */
  function giveUp(s, n) {
    if (ws !== s) return;
    abandoned = n;
    s.close();
    onClose();
  }

  /** @type {ReturnType<typeof setTimeout> | null} */
  let reconnect = null;
  /** @type {ReturnType<typeof setInterval> | null} */
  let countdown = null;
  function onClose() {
    ws = null;
    replace(status, "disconnected");
    status.classList.remove("live");
    for (const el of log.querySelectorAll(".streaming")) el.classList.remove("streaming");
    if (closed || reconnect) return;
    view.classList.add("offline");
    const wait = Math.min(10_000, 1000 * 2 ** retry++);
    let left = Math.ceil(wait / 1000);
    const now = h(
      "button",
      { type: "button", class: "link", id: "reconnect-now", onclick: () => fire() },
      "Reconnect now",
    );
    const line = h("span", null);
    const tick = () => replace(line, `Connection lost. Reconnecting in ${left} s… `);
    tick();
    replace(banner, line, now);
    banner.hidden = false;
    countdown = setInterval(() => ((left = Math.max(0, left - 1)), tick()), 1000);
    const fire = () => {
      if (reconnect) clearTimeout(reconnect);
      if (countdown) clearInterval(countdown);
      reconnect = null;
      replace(banner, "Reconnecting…");
      if (!closed) connect().catch(connectFailed);
    };
    reconnect = setTimeout(fire, wait);
  }

  /**
   * A connection that could not be made: tried again later, unless the conversation is gone
   * (deleted elsewhere: its ws-ticket answers not_found), which no retry mends. Then the view says
   * so, as a load that failed does, with a way to a new chat, and the sidebar drops it.
   * @param {unknown} err
   */
  function connectFailed(err) {
    if (!(err instanceof ApiError && err.type === "not_found")) return onClose();
    if (closed) return;
    closed = true;
    watch?.stop();
    if (reconnect) clearTimeout(reconnect);
    if (countdown) clearInterval(countdown);
    reconnect = countdown = null;
    ws?.close();
    replace(root, errorLine(plainError(err).text), h("p", null, h("a", { href: "#/" }, "Start a new chat")));
    conversationsChanged();
  }

  /** @param {string | null} turnId */
  function setRunning(turnId) {
    running = turnId;
    const busy = turnId !== null;
    // The button being hidden may hold the focus: it moves to the one shown in its place (Send and
    // Stop share a spot), never back to the top of the page.
    const hadFocus = document.activeElement === sendButton || document.activeElement === stopButton;
    sendButton.hidden = busy;
    stopButton.hidden = !busy;
    stopButton.removeAttribute("aria-disabled");
    stopButton.textContent = "Stop";
    log.setAttribute("aria-busy", String(busy));
    if (hadFocus) (busy ? stopButton : text).focus();
    if (!busy) stopRequested = false;
  }

  /** @param {string} turnId @param {boolean} [resumed] */
  function turnFor(turnId, resumed = false) {
    let t = turns.get(turnId);
    if (!t) {
      // A resumed turn is this page's waiting prompt only when the server had named it (`accepted`).
      const at = pending.findIndex((p) => p.dataset.for === turnId && (!resumed || !!p.dataset.resuming));
      const el =
        (at >= 0 ? pending.splice(at, 1)[0] : undefined) ??
        h(
          "section",
          { class: "turn live" },
          h("article", { class: "msg assistant live" }, h("div", { class: "reply-body" })),
        );
      el.dataset.turn = turnId;
      delete el.dataset.resuming;
      if (!el.isConnected) stick(() => log.append(el));
      const body = /** @type {HTMLElement} */ (el.querySelector(".msg.assistant .reply-body"));
      t = {
        el,
        body,
        waiting: el.querySelector(".waiting"),
        piece: null,
        thinking: null,
        thinkingKey: "",
        thoughts: [],
        steps: new Map(),
        saved: [],
        error: null,
        refusal: null,
        prompt: el.dataset.prompt ?? "",
        started: false,
      };
      turns.set(turnId, t);
    }
    return t;
  }

  /** @param {any} t */
  const stopWaiting = (t) => {
    t.waiting?.remove();
    t.waiting = null;
  };

  /** Streamed text renders as markdown once per frame (as plain text, should the renderer throw). @type {Set<any>} */
  const dirty = new Set();
  let frame = 0;
  const flush = () => {
    frame = 0;
    stick(() => {
      for (const p of dirty) renderMarkdownOrText(p.el, p.text);
    });
    dirty.clear();
  };

  /** The title the server says the conversation has now (the model's, or a rename from anywhere). @param {string} name */
  function retitle(name) {
    meta.title = name;
    replace(title, name || "New chat");
    document.title = `${name || "New chat"} · context-chat`;
    conversationsChanged({ id, title: name });
  }

  /**
   * The page's send an error without a turnId answers: a send refused before it became a turn (the
   * frame failed the server's checks: too long, too many attachments). Named by its `ref`; from a
   * server that does not echo it, the send still waiting while no results post is (a refused
   * results post is the other error that names no turn).
   * @param {any} e @returns {HTMLElement | undefined}
   */
  function refusedSend(e) {
    if (e.type !== "error" || e.turnId) return undefined;
    if (e.ref) return pending.find((p) => p.dataset.ref === e.ref);
    if (running !== "pending" || resultsPosted) return undefined;
    return pending.findLast((p) => !p.dataset.for);
  }

  /** @param {any} event */
  function onEvent(event) {
    let e = event;
    if (e.type === "pong") return;
    // A send refused before it was a turn is answered as one refused after: it gets a turnId of the
    // page's own, so the error ends its waiting section (`finish`): the page is idle again, and the
    // message and its files go back into the composer.
    const unsent = refusedSend(e);
    if (unsent) e = { ...e, ref: unsent.dataset.ref, turnId: `refused:${unsent.dataset.ref}` };
    // The heartbeat's ping refused over the key's rate limit (no send nor results post waits on it):
    // the socket answered, which is all a ping asks.
    else if (
      e.type === "error" &&
      !e.turnId &&
      !e.ref &&
      e.error?.type === "rate_limited" &&
      watch?.waiting() &&
      !resultsPosted
    )
      return;
    if (e.type === "error" && e.ref && e.turnId && e.error?.type === "idempotency_in_progress") return ownTurn(e);
    // This page's send was taken (or refused) under this turnId: its waiting section is that turn's.
    if (e.type === "accepted" || (e.type === "error" && e.ref)) {
      const el = pending.find((p) => p.dataset.ref === e.ref);
      if (el) el.dataset.for = e.turnId;
      // Stop was pressed before the server named the turn: it can be stopped now, queued or not.
      if (el && e.type === "accepted" && stopRequested && running === "pending") stop();
      if (e.type === "accepted") return;
    }
    if (e.type === "stopped") return;
    if (e.type === "title_changed") return retitle(e.title);
    if (e.type === "exchange_superseded") return supersede(e);
    if (e.type === "message" && (e.turnId === "attachment" || e.turnId === "resume")) return addSettled([e.message]);
    if (e.type === "error" && e.error?.type === "authentication_error") {
      window.dispatchEvent(new CustomEvent("unauthorized"));
      return;
    }
    if (e.type === "progress" && !e.turnId) return;
    if (e.type === "error" && !e.turnId) {
      // A refused results post (the socket's refusals name no turn): Send results is offered again.
      resultsAnswered(false);
      return stick(() => log.append(turnError(e.error, "")));
    }
    if (e.type === "resumed") {
      caughtUp = true;
      // The resumed socket did not name the turn Stop was pressed for: it ended meanwhile.
      stopOnReturn = null;
      if (pendingRecheck && pendingRecheck === pendingFor) hidePending();
      pendingRecheck = null;
      return unclaimedAfterResume();
    }
    if (!e.turnId) return;
    // A paused turn's calls sent again to a resuming socket: the panel, once (typed answers stay).
    if (e.type === "requires_action" && e.turnId === pendingRecheck) pendingRecheck = null;
    // The turn still waits on these calls (a post lost with an earlier socket): Send results works
    // again. Not for a post on this socket while its catch-up (which names them first) comes in.
    if (e.type === "requires_action" && e.turnId === pendingFor && (caughtUp || resultsOn < connection))
      resultsAnswered(false);
    // The paused turn goes on: the results were taken.
    if (e.type === "turn_start" && e.turnId === pendingFor) resultsAnswered(true);
    if (e.type === "requires_action" && !turns.has(e.turnId)) return pendingFor === e.turnId || showPending(e);
    const resumed = e.type === "turn_start" && e.resumed;
    const t = turnFor(e.turnId, resumed);
    // A turn running when the socket (re)connected: this page's to stop, as the one it sent.
    if (resumed) t.el.dataset.mine = "1";
    if (e.type === "turn_start") t.started = true;
    // A turn running now (another tab's, or one resumed): the last settled turn's Retry goes (it would be refused).
    if (e.type === "turn_start" && settled.querySelector(".no-reply .retry, .turn-error .retry")) renderSettled();
    if (e.type === "turn_start" && t.el.dataset.mine) setRunning(e.turnId);
    if (e.type === "turn_start" && running === e.turnId && (stopRequested || stopOnReturn === e.turnId)) {
      stopOnReturn = null;
      stop();
    }
    stick(() => {
      switch (e.type) {
        case "delta": {
          stopWaiting(t);
          t.thinking = null;
          const agent = e.agent?.name ?? "";
          if (!t.piece || t.piece.agent !== agent) {
            const el = h("div", { class: "md streaming" });
            t.piece = { el, text: "", agent };
            if (agent) t.body.append(h("div", { class: "agent-live muted" }, `Sub-agent ${agent}:`));
            t.body.append(el);
          }
          t.piece.text += e.text;
          dirty.add(t.piece);
          frame ||= requestAnimationFrame(flush);
          break;
        }
        case "thinking": {
          stopWaiting(t);
          const key = `${e.agent?.segment ?? ""}:${e.block}`;
          if (t.thinkingKey !== key || !t.thinking) {
            endPiece(t);
            t.thinkingKey = key;
            t.thinking = thinkingBlock(e.redacted ? null : "");
            t.thinking.classList.add("live");
            // A sub-agent's thinking is not drawn in the saved reply: only the master's is named.
            if (!e.agent) t.thoughts.push(t.thinking);
            t.body.append(t.thinking);
          }
          if (e.text) {
            let body = t.thinking.querySelector(".thinking-text");
            if (!body) {
              const tag = t.thinking.querySelector(".tag");
              if (tag) tag.textContent = "Thinking";
              t.thinking.append((body = h("div", { class: "thinking-text" })));
            }
            body.append(e.text);
          }
          break;
        }
        case "tool_use": {
          stopWaiting(t);
          endPiece(t);
          t.thinking = null;
          const step = toolStep(e);
          step.classList.add("running");
          /** @type {HTMLElement} */ (step.querySelector(".step-label")).replaceChildren(
            "Using ",
            h("strong", null, e.name),
            "…",
          );
          t.steps.set(e.id, step);
          t.body.append(step);
          break;
        }
        case "tool_result": {
          const step = t.steps.get(e.tool_use_id);
          if (step)
            fillStep(step, {
              is_error: e.is_error,
              text: e.preview + (e.chars > e.preview.length ? "\n…" : ""),
              chars: e.chars,
            });
          break;
        }
        case "progress": {
          const running = [...t.steps.values()].reverse().find((s) => s.classList.contains("running"));
          (running?.querySelector(".step-body") ?? t.body).append(h("div", { class: "progress" }, e.message));
          break;
        }
        case "refusal":
          endPiece(t);
          // Kept for the saved reply's notice: the streamed one goes with the streamed view at turn_end.
          t.refusal = e;
          t.body.append(refusalLine(e));
          break;
        case "model_changed":
          t.body.append(modelChangedLine(e));
          break;
        case "retry":
          endPiece(t);
          // The reply is asked again: the thinking streamed so far is not the saved reply's.
          t.thoughts = [];
          t.body.append(h("div", { class: "progress" }, "The model's reply broke off; asking again…"));
          break;
        case "compaction_started":
          endPiece(t);
          t.body.append(h("div", { class: "compaction-notice running", role: "status" }, "Compacting older context…"));
          break;
        case "compaction":
          t.body.querySelector(".compaction-notice.running")?.replaceWith(compactionNotice(e));
          endPiece(t);
          break;
        case "message":
          t.saved.push(e.message);
          // Another tab's (or client's) turn: its question shows as soon as the server saved it.
          if (isPrompt(e.message) && !t.el.querySelector(".msg.user")) t.el.prepend(userMessage(e.message));
          // The thinking streamed for this reply takes the names the transcript gives it, so a
          // section the reader opened stays open when the saved reply replaces the streamed one.
          if (e.message.role === "assistant" && !e.message.agent)
            t.thoughts.splice(0).forEach((el, i) => {
              el.dataset.thinking = `${e.message.id}:${i}`;
            });
          break;
        case "error":
          t.error = e.error;
          // Refused before it started (e.g. a regenerate while another turn runs): no turn_end follows.
          if (!t.started) finish(e.turnId, t, { stop_reason: "error" });
          break;
        case "requires_action":
          showPending(e);
          break;
        case "turn_end":
          finish(e.turnId, t, e);
          if (e.turnId === pendingFor && e.stop_reason !== "requires_action") hidePending();
          break;
      }
    });
  }

  /** @param {any} t */
  function endPiece(t) {
    if (!t.piece) return;
    renderMarkdownOrText(t.piece.el, t.piece.text);
    dirty.delete(t.piece);
    t.piece.el.classList.remove("streaming");
    t.piece = null;
  }

  /** The streamed view gives way to the messages as saved. @param {string} turnId @param {any} t @param {any} e */
  function finish(turnId, t, e) {
    endPiece(t);
    turns.delete(turnId);
    // This page's send refused before it started (a turn paused on client tools, a rate limit): no
    // turn_start named it, so `running` still says "pending". The page is idle again and the
    // message goes back into the composer with its files (sending it again is the retry).
    const refused = !t.started && !!t.el.dataset.ref && running === "pending";
    if (running === turnId || refused) setRunning(null);
    // A key refused as another request's is not sent again with the message.
    if (t.error?.type === "idempotency_key_reused") delete t.el.dataset.key;
    if (refused && !t.el.dataset.regenerate) putBack([t.el]);
    // This page's message stopped while it was queued: nothing of it was saved, so it goes back
    // into the composer (with its files), as one never sent.
    const cancelled = e.stop_reason === "interrupted" && !t.saved.length && !!t.el.dataset.ref;
    if (cancelled && !t.el.dataset.regenerate) putBack([t.el]);
    const prompt = t.saved.find((/** @type {any} */ m) => m.role === "user" && promptText(m));
    if (t.error && prompt) errors.set(prompt.id, t.error);
    const replied = t.saved.some((/** @type {any} */ m) => m.role === "assistant");
    if (e.stop_reason === "interrupted" && prompt && !replied) stoppedEarly.add(prompt.id);
    const notes = [...t.body.querySelectorAll(".progress")]
      .map((n) => n.textContent ?? "")
      .filter((n) => n && !n.startsWith("The model's reply broke off"));
    if (notes.length && prompt) narration.set(prompt.id, notes);
    const refusedReply = t.saved.findLast(
      (/** @type {any} */ m) => m.role === "assistant" && !m.agent && m.stopReason === "refusal",
    );
    if (refusedReply && t.refusal) refusals.set(refusedReply.id, t.refusal.category ?? null);
    const place = readerPlace(t.el);
    // Read before the streamed view goes: the log shrinks meanwhile, which would clamp a reader
    // scrolled up in the reply to the bottom, and then stick there.
    const wasAtBottom = atBottom();
    const top = log.scrollTop;
    t.el.remove();
    // Drawn again even when nothing new was saved: the last turn's Retry and Regenerate follow `running`.
    if (!addSettled(t.saved)) renderSettled();
    restorePlace(place);
    log.scrollTop = wasAtBottom ? log.scrollHeight : top;
    // A compaction during the turn is a timeline card now: placed where it ran, as on reload.
    if (t.body.querySelector(".compaction-notice")) refreshCards().catch(() => {});
    if (t.error && !prompt) stick(() => log.append(turnError(t.error, refused ? "" : t.prompt)));
    if (!t.error && e.stop_reason !== "requires_action")
      announce(
        cancelled && !t.el.dataset.regenerate
          ? "Stopped before it started: your message is back in the box."
          : e.stop_reason === "interrupted"
            ? "Stopped."
            : e.stop_reason === "refusal"
              ? "The model declined to answer."
              : "Reply finished.",
      );
    if (t.error)
      announce(
        refused && !t.el.dataset.regenerate
          ? `${plainError(t.error).text} Your message is back in the box.`
          : plainError(t.error).text,
      );
    afterTurn();
  }

  async function refreshCards() {
    const timeline = await api("GET", `/v1/conversations/${id}/timeline?limit=500`);
    cards.clear();
    for (const c of timeline.data) cards.set(c.afterSeq, [...(cards.get(c.afterSeq) ?? []), c]);
    renderSettled();
  }

  /** A regenerate replaced an exchange: its messages stay, marked, and leave the visible turns. @param {any} e */
  function supersede(e) {
    const ids = new Set(e.messageIds);
    for (const m of messages) if (ids.has(m.id)) Object.assign(m, { superseded: true, supersededBy: e.supersededBy });
    renderSettled();
  }

  /** Whether any of them was new (the transcript is drawn again then). @param {any[]} saved */
  function addSettled(saved) {
    const known = new Set(messages.map((m) => m.id));
    const fresh = saved.filter((m) => !known.has(m.id));
    if (!fresh.length) return false;
    messages.push(...fresh);
    messages.sort((a, b) => a.seq - b.seq);
    renderSettled();
    return true;
  }

  /**
   * After a turn: the sidebar reorders (the conversation is the most recent activity now), and an
   * untitled conversation's heading picks up the title the server writes after the first exchange:
   * the socket's `title_changed` brings it, and, should the socket be down, it is asked for again a
   * few times (a moment after the turn ends).
   */
  async function afterTurn() {
    // The listing row is refreshed just after the turn ends: read it now and once more a moment later.
    conversationsChanged();
    setTimeout(() => conversationsChanged(), 1_500);
    for (const wait of TITLE_CHECKS_MS) {
      if (meta.title && meta.title !== "New conversation") return;
      if (!messages.some((m) => m.role === "assistant")) return;
      await new Promise((resolve) => setTimeout(resolve, wait));
      try {
        const now = await api("GET", `/v1/conversations/${id}`);
        if (!now.title || now.title === "New conversation") continue;
        retitle(now.title);
        return;
      } catch {
        return;
      }
    }
  }

  // ---- client tool calls a paused turn waits on ----------------------------------------------

  /** @param {any} action */
  function showPending(action) {
    hidePending();
    pendingFor = action.turnId;
    form.before(
      pendingCallsPanel(action, async (results) => {
        try {
          const s = await connect();
          resultsOn = connection;
          /** @type {Promise<boolean>} */
          const answer = new Promise((resolve) => (resultsPosted = resolve));
          s.send(JSON.stringify({ type: "tool_results", results }));
          return await answer;
        } catch (err) {
          resultsPosted = null;
          stick(() => log.append(turnError(err, "")));
          return false;
        }
      }),
    );
  }
  function hidePending() {
    const panel = view.querySelector("#pending-calls");
    // Answered by keyboard, the focus is on the panel's Send results: it goes to the composer, not
    // to the top of the page with the panel.
    if (panel?.contains(document.activeElement)) text.focus({ preventScroll: true });
    panel?.remove();
    pendingFor = null;
    resultsAnswered(false);
  }

  // ---- sending and stopping -----------------------------------------------------------------

  /**
   * Sends a turn: for a message from the composer (or a new chat's first, `keep`), the staged files
   * are uploaded first (each chip shows its progress) and go with it as `attachments` (a Retry
   * passes the files it uploaded before). An edited prompt or a Retry takes none of the staged
   * files: they wait, staged, for the composer's Send. A regenerate sends no content:
   * the server runs the last prompt again. A message from the composer leaves it as it is sent; one
   * typed nowhere on this page (a new chat's first) is `keep`: put in the composer if it cannot be sent.
   * @param {string} content @param {{ regenerate?: boolean, label?: string, files?: Staged[], fromComposer?: boolean, keep?: boolean }} [opts]
   */
  async function sendTurn(content, opts = {}) {
    const regenerate = !!opts.regenerate;
    // A regenerate sends no content (the server runs the stored prompt again): one made only of an
    // image or a file has no words, and still goes, shown by its `label` until its reply comes.
    if ((!regenerate && !content.trim()) || running) return false;
    log.querySelector(".empty")?.remove();
    const user = h(
      "article",
      { class: "msg user" },
      h(
        "div",
        { class: "bubble" },
        h("div", { class: "text", dir: "auto" }, content.trim() ? content : (opts.label ?? "")),
      ),
    );
    const waiting = h(
      "div",
      { class: "waiting" },
      h("span", { class: "dots", "aria-hidden": "true" }, h("i"), h("i"), h("i")),
      " Thinking…",
    );
    const ref = crypto.randomUUID();
    const el = h(
      "section",
      {
        class: "turn live",
        "data-mine": "1",
        "data-ref": ref,
        "data-prompt": content,
        ...(regenerate ? { "data-regenerate": "1" } : {}),
      },
      user,
      h("article", { class: "msg assistant live" }, h("div", { class: "reply-body" }, waiting)),
    );
    setRunning("pending");
    announce("Sent. Waiting for the reply.");
    /** @type {Staged[]} */
    let files = opts.files ?? [];
    const uploading = !regenerate && (!!opts.fromComposer || !!opts.keep) && staged.length > 0;
    const earlier = files.length;
    try {
      if (uploading) files = [...files, ...(await uploadStaged())];
    } catch (err) {
      // A file that could not be uploaded keeps its chip, with the reason; nothing is sent.
      const stopped = stopRequested;
      setRunning(null);
      announce(stopped ? "Stopped before sending: the message and its files are still here." : plainError(err).text);
      return false;
    }
    // Stop pressed once the files were up: nothing is sent, and the files are not kept.
    if (uploading && stopRequested) {
      for (const uploaded of files.slice(earlier))
        api("DELETE", `/v1/conversations/${id}/attachments/${uploaded.id}`).catch(() => {});
      setRunning(null);
      announce("Stopped before sending: the message is still here; add its files again.");
      return false;
    }
    const attachments = files.map((f) => /** @type {string} */ (f.id));
    // One key per composed message: a message put back (its send perhaps taken before the socket
    // dropped) goes again with its key, when it goes as it was.
    const kept = regenerate ? undefined : resendKeys.get(content);
    resendKeys.delete(content);
    const idempotencyKey = kept && kept.files === attachments.join(" ") ? kept.key : crypto.randomUUID();
    el.dataset.key = idempotencyKey;
    try {
      const s = await connect();
      sentFiles.set(el, files);
      pending.push(el);
      stick(() => log.append(el));
      if (opts.fromComposer) {
        text.value = "";
        grow();
      }
      s.send(
        JSON.stringify(
          regenerate
            ? { type: "send", regenerate: true, ref, idempotencyKey }
            : { type: "send", content, ref, idempotencyKey, ...(attachments.length ? { attachments } : {}) },
        ),
      );
      return true;
    } catch (err) {
      el.remove();
      setRunning(null);
      if (opts.keep) {
        // Written on the new-chat page, it is nowhere else: it goes into the composer (and, when
        // the chat was left meanwhile, into its draft), so Send is the retry.
        putBack([el]);
        if (closed) saveDraft();
        else {
          announce(`${plainError(err).text} Your message is back in the box.`);
          stick(() => log.append(turnError(err, "")));
        }
        return false;
      }
      // The files went up: Retry sends them with the message again.
      stick(() => log.append(turnError(err, content, { files })));
      return false;
    }
  }

  /**
   * Uploads the staged files (stored without a note: the message brings it); the files sent, each
   * with its id. A chip removed (✕) before or while its file goes up is left out: its upload is
   * cancelled, or, when it had already landed, the file is deleted again. A file already up (a Send
   * that failed on a later one) is not uploaded again.
   * @returns {Promise<Staged[]>}
   */
  async function uploadStaged() {
    for (const s of [...staged]) {
      if (!staged.includes(s) || s.id) continue;
      const bar = /** @type {HTMLProgressElement} */ (
        h("progress", { max: "1", value: "0", "aria-label": `Uploading ${s.file.name}` })
      );
      s.row.querySelector("progress")?.remove();
      s.row.querySelector(".remove")?.before(bar);
      s.row.classList.remove("failed");
      s.row.querySelector(".upload-error")?.remove();
      const { done, abort } = uploadAttachment(
        id,
        s.file,
        (sent, total) => ((bar.max = total || 1), (bar.value = sent)),
        { attach: false },
      );
      s.abort = abort;
      try {
        const uploaded = (await done).id;
        if (staged.includes(s)) s.id = uploaded;
        else api("DELETE", `/v1/conversations/${id}/attachments/${uploaded}`).catch(() => {});
      } catch (err) {
        if (!staged.includes(s)) continue;
        s.row.classList.add("failed");
        bar.remove();
        s.row.append(h("span", { class: "upload-error", role: "alert" }, plainError(err).text));
        throw err;
      }
    }
    // Sent: the chips go (the message shows its files).
    const sent = staged.splice(0);
    for (const s of sent) s.row.remove();
    return sent;
  }

  /**
   * Messages of this page's the server never took (refused, or lost with the socket) go back into
   * the composer, ahead of anything typed since (never dropped), with the files they had uploaded
   * as chips again (sent with the message next time, not uploaded twice).
   * @param {HTMLElement[]} sends
   */
  function putBack(sends) {
    for (const el of sends) {
      const files = (sentFiles.get(el) ?? []).map((f) => f.id).join(" ");
      if (el.dataset.prompt?.trim() && el.dataset.key)
        resendKeys.set(el.dataset.prompt, { key: el.dataset.key, files });
    }
    const prompts = sends.map((el) => el.dataset.prompt ?? "").filter((p) => p.trim());
    const typed = text.value.trim() ? [text.value] : [];
    if (prompts.length) {
      text.value = [...prompts, ...typed].join("\n\n");
      grow();
    }
    for (const f of sends.flatMap((el) => sentFiles.get(el) ?? []))
      if (!staged.includes(f)) {
        staged.push(f);
        uploads.append(f.row);
      }
  }

  async function send() {
    const content = text.value;
    if (!content.trim()) {
      if (staged.length) {
        text.focus();
        announce("Add a message to send with the files.");
      }
      return;
    }
    await sendTurn(content, { fromComposer: true });
  }

  /** Stop: the running turn ends as interrupted (what streamed is kept). Before turn_start, once it starts. */
  function stop() {
    stopRequested = true;
    // aria-disabled, not disabled: a disabled button would drop the focus to the top of the page.
    stopButton.setAttribute("aria-disabled", "true");
    stopButton.textContent = "Stopping…";
    if (running === "pending") {
      // Still uploading the message's files: the uploads are cancelled and nothing is sent.
      for (const s of staged) s.abort?.();
      // Taken but not started (queued behind another tab's turn): a stop naming it cancels it at
      // once, and nothing of it is saved. Not taken yet: sent when its `accepted` names it.
      const queued = queuedTurn();
      if (queued && ws) ws.send(JSON.stringify({ type: "stop", turnId: queued }));
      return;
    }
    if (!running) return;
    // The socket is down: the stop is sent for this turn when the resumed socket names it again.
    if (!ws) {
      stopOnReturn = running;
      return;
    }
    ws.send(JSON.stringify({ type: "stop", turnId: running }));
  }
  /** This page's send the server took (its `accepted`, or its `turn_queued`) and has not started: its turnId. */
  function queuedTurn() {
    const waiting = pending.find((p) => p.dataset.for)?.dataset.for;
    return waiting ?? [...turns].find(([, t]) => t.el.dataset.ref && !t.started)?.[0] ?? null;
  }
  // Once asked, the button waits for the turn to end (it is aria-disabled, so it keeps the focus).
  stopButton.addEventListener("click", () => stopRequested || stop());
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    send();
  });
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      if (!running) send();
    }
  });
  // Escape stops the running turn wherever the focus is in the chat (on Stop after Send was
  // clicked, say), not only in the message box. Not while an input method composes (Escape then
  // cancels the composition), nor in a message's Edit box (it cancels the edit, and keeps the key).
  view.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !running || e.isComposing || e.defaultPrevented) return;
    if (e.target instanceof Element && e.target.closest(".editor")) return;
    stop();
  });
  const grow = () => {
    text.style.height = "auto";
    text.style.height = `${Math.min(text.scrollHeight, 240)}px`;
  };
  text.addEventListener("input", grow);

  // ---- attachments --------------------------------------------------------------------------

  /**
   * A picked file is staged as a chip (name, type, size, remove) and uploaded when the message is
   * sent. A type the server cannot read is refused here, before any upload.
   * @param {File} file
   */
  function stage(file) {
    if (!readable(file)) {
      // The alert is inside the item: a list holds only list items.
      const row = h(
        "li",
        { class: "upload failed refused" },
        h(
          "span",
          { role: "alert" },
          h("strong", null, file.name),
          ` can't be read here: use PDF, text, code, CSV, XLSX, DOCX or an image.`,
        ),
      );
      row.append(removeButton(() => row.remove(), file.name));
      uploads.append(row);
      return;
    }
    if (file.size > MAX_UPLOAD) {
      const row = h(
        "li",
        { class: "upload failed refused" },
        h("span", { role: "alert" }, h("strong", null, file.name), ` is too large (${bytes(file.size)}).`),
      );
      row.append(removeButton(() => row.remove(), file.name));
      uploads.append(row);
      return;
    }
    log.querySelector(".empty")?.remove();
    const row = h(
      "li",
      { class: "upload file-chip staged" },
      h("span", { class: "file-name" }, file.name),
      h("span", { class: "file-type muted" }, file.type || "file"),
      h("span", { class: "file-size muted" }, bytes(file.size)),
    );
    /** @type {Staged} */
    const entry = { file, row };
    row.append(
      removeButton(() => {
        row.remove();
        const at = staged.indexOf(entry);
        if (at >= 0) staged.splice(at, 1);
        // Removed while Send uploads it: the upload stops and the file is not sent.
        entry.abort?.();
        // Already up (a Send that failed on a later file, or a message put back): not kept.
        if (entry.id) api("DELETE", `/v1/conversations/${id}/attachments/${entry.id}`).catch(() => {});
        if (!staged.length && !messages.length) renderSettled();
      }, file.name),
    );
    staged.push(entry);
    uploads.append(row);
  }

  /** @param {() => void} onRemove @param {string} name */
  const removeButton = (onRemove, name) =>
    h("button", { type: "button", class: "ghost remove", "aria-label": `Remove ${name}`, onclick: onRemove }, "✕");

  const draftKey = `draft:${id}`;
  /** Whether this view has taken the stored draft (until then, leaving keeps it as it is). */
  let draftTaken = false;
  /**
   * The draft this conversation was left with, back in the composer: what was typed, and the
   * messages sent that never started, less those the transcript now holds (sent after all).
   */
  function restoreDraft() {
    if (closed) return;
    draftTaken = true;
    const raw = sessionStorage.getItem(draftKey);
    sessionStorage.removeItem(draftKey);
    if (!raw) return;
    /** @type {{ typed?: string, unsent?: string[], after?: number, keys?: Record<string, string> }} */
    let draft;
    try {
      draft = JSON.parse(raw);
    } catch {
      draft = { typed: raw };
    }
    if (!draft || typeof draft !== "object") draft = { typed: String(raw) };
    // A message sent but never started is put back unless the transcript holds it since it was left.
    const since = new Set(
      messages.filter((m) => m.seq > (draft?.after ?? 0) && m.role === "user").map((m) => promptText(m)),
    );
    const parts = [...(draft.unsent ?? []).filter((p) => !since.has(p)), draft.typed ?? ""].filter(
      (t) => typeof t === "string" && t.trim(),
    );
    if (!parts.length) return;
    for (const [prompt, key] of Object.entries(draft.keys ?? {}))
      if (typeof key === "string" && parts.includes(prompt)) resendKeys.set(prompt, { key, files: "" });
    // Ahead of anything typed while the conversation loaded: neither is dropped.
    text.value = [...parts, ...(text.value.trim() ? [text.value] : [])].join("\n\n");
    grow();
  }

  async function catchUp() {
    const after = messages.length ? messages[messages.length - 1].seq : 0;
    const page = await api("GET", `/v1/conversations/${id}/messages?after=${after}&limit=100`);
    addSettled(page.data);
  }

  /** @param {FileList | File[] | null | undefined} files */
  const stageAll = (files) => [...(files ?? [])].forEach((f) => stage(f));
  // Files pasted into the composer (a screenshot, a copied file) are staged as dropped ones are; a
  // paste of text alone goes into the box as usual.
  text.addEventListener("paste", (e) => {
    if (!e.clipboardData?.files.length) return;
    e.preventDefault();
    stageAll(e.clipboardData.files);
  });
  fileInput.addEventListener("change", () => {
    stageAll(fileInput.files);
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
    stageAll(e.dataTransfer?.files);
  });

  const ready = connect().catch(connectFailed);
  if (opts.firstMessage) ready.then(() => sendTurn(/** @type {string} */ (opts.firstMessage), { keep: true }));
  else ready.then(() => catchUp().catch(() => {})).then(restoreDraft);
  text.focus();
  /**
   * What was written and not sent, or sent and never started (a refused key closes the socket),
   * waits for this conversation's next opening in this tab.
   */
  function saveDraft() {
    const sends = pending.filter((el) => !el.dataset.regenerate && el.dataset.prompt?.trim());
    const unsent = sends.map((el) => el.dataset.prompt ?? "");
    const typed = text.value.trim() ? text.value : "";
    const after = messages.length ? messages[messages.length - 1].seq : 0;
    // Each message's idempotencyKey goes with it (sent again, it is the turn the server may have taken).
    /** @type {Record<string, string>} */
    const keys = {};
    for (const [prompt, kept] of resendKeys) if (!kept.files) keys[prompt] = kept.key;
    for (const el of sends)
      if (el.dataset.key && !sentFiles.get(el)?.length) keys[el.dataset.prompt ?? ""] = el.dataset.key;
    if (unsent.length || typed) sessionStorage.setItem(draftKey, JSON.stringify({ typed, unsent, after, keys }));
    else if (draftTaken) sessionStorage.removeItem(draftKey);
  }
  return () => {
    saveDraft();
    closed = true;
    watch?.stop();
    if (reconnect) clearTimeout(reconnect);
    if (countdown) clearInterval(countdown);
    if (frame) cancelAnimationFrame(frame);
    ws?.close();
  };
}
