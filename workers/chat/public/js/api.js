// The only place that talks to the API. The key lives in sessionStorage (this tab only, gone when
// it closes), or in localStorage when the person chose "stay signed in", and travels in the
// Authorization header; websockets use single-use tickets instead, so the key never appears in a URL.
import { DEVICE_PREFS } from "./prefs.js";

const KEY_SLOT = "context-chat.apiKey";

export const session = {
  get key() {
    return sessionStorage.getItem(KEY_SLOT) ?? localStorage.getItem(KEY_SLOT);
  },
  /** @param {string} key @param {boolean} [remember] keep it across tabs and restarts */
  signIn(key, remember = false) {
    sessionStorage.setItem(KEY_SLOT, key);
    if (remember) localStorage.setItem(KEY_SLOT, key);
    else localStorage.removeItem(KEY_SLOT);
  },
  signOut() {
    sessionStorage.removeItem(KEY_SLOT);
    localStorage.removeItem(KEY_SLOT);
  },
  /**
   * What the tab and the browser keep for the person, gone when they sign out (a shared computer's
   * next user would see it): every unsent draft (`draft:<conversation id>`, `draft:new`, which
   * name conversations and hold what was typed) and any other key but the device's preferences
   * (theme, developer view) and the key slot, which `signOut` and `signIn` look after.
   */
  forgetPerson() {
    for (const store of [sessionStorage, localStorage]) {
      const names = Array.from({ length: store.length }, (_, i) => store.key(i));
      for (const name of names)
        if (name !== null && name !== KEY_SLOT && !DEVICE_PREFS.includes(name)) store.removeItem(name);
    }
  },
};

export class ApiError extends Error {
  /** @param {number} status @param {string} type @param {string} message */
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
    /** @type {number | undefined} the server's Retry-After, when it sent one */
    this.retryAfterSeconds = undefined;
  }
}

/**
 * @param {Response | XMLHttpRequest} res @param {string} text
 * @param {boolean} signedIn whether the signed-in key was refused (it was revoked: sign out)
 */
function failure(res, text, signedIn = true) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const err = new ApiError(res.status, body?.error?.type ?? "http_error", body?.error?.message ?? `HTTP ${res.status}`);
  const retryAfter = Number("headers" in res ? res.headers.get("retry-after") : res.getResponseHeader("retry-after"));
  if (retryAfter > 0) err.retryAfterSeconds = retryAfter;
  if (res.status === 401 && signedIn) window.dispatchEvent(new CustomEvent("unauthorized"));
  return err;
}

/** What a request that could not reach the server says, in every view. */
const UNREACHABLE = "Can't reach the server. Check your connection and try again.";

/**
 * Sends a request with the key and gives back its answer once it is a success; the one path every
 * call takes, so each failure reads the same: a network drop is a `network_error`, an error body
 * that is not JSON (a proxy's HTML page) an `http_error` of its status, and a refused signed-in key
 * (401) signs out. For a body or an answer that is not JSON (a file streamed up, a download).
 * @param {string} method
 * @param {string} path
 * @param {{ body?: BodyInit, type?: string, accept?: string, key?: string }} [opts] `type`: the body's
 *   content type; `key` defaults to the signed-in key
 * @returns {Promise<Response>}
 */
export async function send(method, path, { body, type, accept, key = session.key ?? "" } = {}) {
  /** @type {Record<string, string>} */
  const headers = { authorization: `Bearer ${key}` };
  if (accept) headers.accept = accept;
  if (type) headers["content-type"] = type;
  let res;
  try {
    res = await fetch(path, { method, headers, body, cache: "no-store" });
  } catch {
    throw new ApiError(0, "network_error", UNREACHABLE);
  }
  if (!res.ok) throw failure(res, await res.text().catch(() => ""), key === session.key);
  return res;
}

/**
 * Reads a successful answer's body, a drop while it arrives read as any other network error.
 * @template T @param {Promise<T>} reading @returns {Promise<T>}
 */
export async function received(reading) {
  try {
    return await reading;
  } catch {
    throw new ApiError(0, "network_error", UNREACHABLE);
  }
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {string} [key] defaults to the signed-in key
 */
export async function api(method, path, body, key = session.key ?? "") {
  const res = await send(method, path, {
    body: body === undefined ? undefined : JSON.stringify(body),
    type: body === undefined ? undefined : "application/json",
    accept: "application/json",
    key,
  });
  const text = await received(res.text());
  return text ? JSON.parse(text) : null;
}

/** Every page of a `{data, next}` listing paged by `after`. @param {string} path */
export async function allPages(path, limit = 500) {
  const out = [];
  let after = 0;
  for (;;) {
    const page = await api("GET", `${path}?after=${after}&limit=${limit}`);
    out.push(...page.data);
    if (!page.next) return out;
    after = page.next;
  }
}

/**
 * Files larger than this go up in parts (the API's R2 multipart upload): one request may carry at
 * most 100 MB on Workers, and a failed part is all that is sent again.
 */
export const MULTIPART_FROM = 64 * 1024 * 1024;
/** The size of each part but the last (R2 wants them equal, and at least the server's minPartBytes). */
const PART_BYTES = 16 * 1024 * 1024;
/** The largest file the pages send (the chat's composer, views/chat.js MAX_UPLOAD, refuses past the same). */
export const MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;

/**
 * Sends `body` with XMLHttpRequest, because fetch cannot report upload progress.
 * @param {string} method
 * @param {string} url
 * @param {{ body: Blob, type: string, expect: number, onProgress: (sent: number) => void }} req
 * @returns {{ done: Promise<any>, abort: () => void }}
 */
function sendBytes(method, url, { body, type, expect, onProgress }) {
  const xhr = new XMLHttpRequest();
  // The key it is sent with: a 401 for it signs out only while it is still the tab's key (as `send`
  // does), never the next person who signed in meanwhile.
  const key = session.key ?? "";
  const done = new Promise((resolve, reject) => {
    xhr.open(method, url);
    xhr.setRequestHeader("authorization", `Bearer ${key}`);
    xhr.setRequestHeader("content-type", type);
    xhr.upload.addEventListener("progress", (e) => onProgress(e.loaded));
    xhr.addEventListener("load", () =>
      xhr.status === expect
        ? resolve(JSON.parse(xhr.responseText))
        : reject(failure(xhr, xhr.responseText, key === session.key)),
    );
    xhr.addEventListener("error", () =>
      reject(new ApiError(0, "network_error", "The upload failed: can't reach the server.")),
    );
    xhr.addEventListener("abort", () => reject(new ApiError(0, "aborted", "upload cancelled")));
    xhr.send(body);
  });
  return { done, abort: () => xhr.abort() };
}

/**
 * Streams a file into the conversation as an attachment: in one request, or in parts past
 * `multipartFrom` (default MULTIPART_FROM).
 * @param {string} conversationId
 * @param {File} file
 * @param {(sent: number, total: number) => void} onProgress
 * @param {{ attach?: boolean, multipartFrom?: number, partBytes?: number }} [opts] `attach: false` stores the file without adding its note: a turn's `attachments` brings it
 * @returns {{ done: Promise<{id: string, note: string, size: number}>, abort: () => void }}
 */
export function uploadAttachment(conversationId, file, onProgress, opts = {}) {
  if (file.size > (opts.multipartFrom ?? MULTIPART_FROM))
    return uploadInParts(`/v1/conversations/${encodeURIComponent(conversationId)}/attachments/uploads`, file, {
      ...opts,
      onProgress,
      idOf: (start) => start.attachmentId,
    });
  return sendBytes(
    "POST",
    `/v1/conversations/${encodeURIComponent(conversationId)}/attachments?name=${encodeURIComponent(file.name)}${opts.attach === false ? "&attach=false" : ""}`,
    {
      body: file,
      type: file.type || "application/octet-stream",
      expect: 201,
      onProgress: (sent) => onProgress(sent, file.size),
    },
  );
}

/** Files the server can read, by name: others (and types not below) are refused before any upload. */
const READABLE =
  /\.(pdf|txt|md|markdown|csv|tsv|json|jsonl|ndjson|log|xml|html?|ya?ml|toml|ini|js|mjs|ts|tsx|jsx|py|rb|go|rs|java|kt|c|h|cpp|hpp|cs|php|sh|sql|css|xlsx|docx|png|jpe?g|gif|webp)$/i;

/** Whether the server can read the file (its name, or else its type). @param {File} file */
export const readable = (file) =>
  READABLE.test(file.name) || /^(text\/|image\/(png|jpeg|gif|webp)$|application\/(pdf|json))/.test(file.type);

/**
 * Streams a file into a project as a conversation's attachment goes up: in one request, or in parts
 * past `multipartFrom` (default MULTIPART_FROM). Every conversation of the project then lists it.
 * @param {string} projectId
 * @param {File} file
 * @param {(sent: number, total: number) => void} onProgress
 * @param {{ multipartFrom?: number, partBytes?: number }} [opts]
 * @returns {{ done: Promise<{id: string, name: string, type: string, size: number, note: string}>, abort: () => void }}
 */
export function uploadProjectFile(projectId, file, onProgress, opts = {}) {
  const files = `/v1/projects/${encodeURIComponent(projectId)}/files`;
  if (file.size > (opts.multipartFrom ?? MULTIPART_FROM))
    return uploadInParts(`${files}/uploads`, file, { ...opts, onProgress, idOf: (start) => start.fileId });
  return sendBytes("POST", `${files}?name=${encodeURIComponent(file.name)}`, {
    body: file,
    type: file.type || "application/octet-stream",
    expect: 201,
    onProgress: (sent) => onProgress(sent, file.size),
  });
}

/**
 * The multipart upload (a conversation's attachment or a project's file, `base` its `…/uploads`):
 * start, the parts one after another, complete; a failure or a cancel aborts it on the server, so
 * nothing of it is kept.
 * @param {string} base
 * @param {File} file
 * @param {{ onProgress: (sent: number, total: number) => void, idOf: (start: Record<string, string>) => string, attach?: boolean, partBytes?: number }} opts
 *   `idOf`: the file's id in the start's answer
 */
function uploadInParts(base, file, opts) {
  const { onProgress } = opts;
  /** @type {{ abort: () => void } | null} */
  let current = null;
  let cancelled = false;
  const done = (async () => {
    const start = await api("POST", base, { name: file.name, type: file.type || undefined });
    const at = `${base}/${encodeURIComponent(opts.idOf(start))}`;
    try {
      const size = Math.max(opts.partBytes ?? PART_BYTES, start.minPartBytes);
      const parts = [];
      for (let n = 0; n * size < file.size; n++) {
        if (cancelled) throw new ApiError(0, "aborted", "upload cancelled");
        const part = sendBytes("PUT", `${at}/parts/${n + 1}`, {
          body: file.slice(n * size, (n + 1) * size),
          type: "application/octet-stream",
          expect: 200,
          onProgress: (sent) => onProgress(n * size + sent, file.size),
        });
        current = part;
        parts.push(await part.done);
      }
      return await api("POST", `${at}/complete`, { parts, ...(opts.attach === false ? { attach: false } : {}) });
    } catch (err) {
      await api("DELETE", at).catch(() => {});
      throw err;
    }
  })();
  return {
    done,
    abort: () => {
      cancelled = true;
      current?.abort();
    },
  };
}

/**
 * Opens the conversation's websocket with a fresh single-use ticket, resuming after message `after`
 * (the server sends what was saved since, and the turn running now with what it streamed so far).
 * @param {string} conversationId
 * @param {(event: any) => void} onEvent
 * @param {() => void} onClose
 * @param {number} after the highest message seq the page shows
 * @returns {Promise<WebSocket>}
 */
export async function openSocket(conversationId, onEvent, onClose, after) {
  const { ticket } = await api("POST", `/v1/conversations/${encodeURIComponent(conversationId)}/ws-ticket`);
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(
    `${scheme}://${location.host}/v1/conversations/${encodeURIComponent(conversationId)}/ws?ticket=${encodeURIComponent(ticket)}&after=${after}`,
  );
  ws.addEventListener("message", (m) => {
    let event;
    try {
      event = JSON.parse(String(m.data));
    } catch {
      return;
    }
    onEvent(event);
  });
  ws.addEventListener("close", onClose);
  return new Promise((resolve, reject) => {
    ws.addEventListener("open", () => resolve(ws), { once: true });
    ws.addEventListener("error", () => reject(new ApiError(0, "socket_error", "Can't connect to the server.")), {
      once: true,
    });
  });
}

/** How often a visible page checks a quiet socket is still there, and how long an answer may take. */
export const PING_EVERY_MS = 60_000;
export const ANSWER_WITHIN_MS = 10_000;

/**
 * Watches an open socket for a silent death: a half-open connection (the laptop slept, the network
 * changed, a proxy dropped it) fires no `close` for minutes. A `ping` frame goes out when the page
 * is shown again, when the browser is back `online`, and every PING_EVERY_MS while the page is
 * visible and the socket was quiet for half that (none while hidden: each ping counts against the
 * key's rate limit and wakes the conversation). Any frame counts as an answer; none within
 * ANSWER_WITHIN_MS of a ping and the socket is given up: `onDead` (once; the watch is over then).
 * @param {WebSocket} ws an open socket
 * @param {() => void} onDead
 * @returns {{ stop: () => void, waiting: () => boolean }} `waiting`: a ping is unanswered
 */
export function watchSocket(ws, onDead) {
  let heard = Date.now();
  /** @type {ReturnType<typeof setTimeout> | null} */
  let deadline = null;
  /** @type {ReturnType<typeof setInterval> | null} */
  let every = null;
  const answered = () => {
    heard = Date.now();
    if (deadline) clearTimeout(deadline);
    deadline = null;
  };
  const ping = () => {
    if (deadline || ws.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify({ type: "ping" }));
    deadline = setTimeout(() => {
      stop();
      onDead();
    }, ANSWER_WITHIN_MS);
  };
  const quiet = () => Date.now() - heard >= PING_EVERY_MS / 2 && ping();
  const visibility = () => {
    if (every) clearInterval(every);
    every = document.hidden ? null : setInterval(quiet, PING_EVERY_MS);
    if (!document.hidden) ping();
  };
  const stop = () => {
    if (deadline) clearTimeout(deadline);
    if (every) clearInterval(every);
    deadline = every = null;
    ws.removeEventListener("message", answered);
    ws.removeEventListener("close", stop);
    document.removeEventListener("visibilitychange", visibility);
    window.removeEventListener("online", ping);
  };
  ws.addEventListener("message", answered);
  ws.addEventListener("close", stop);
  document.addEventListener("visibilitychange", visibility);
  window.addEventListener("online", ping);
  if (!document.hidden) every = setInterval(quiet, PING_EVERY_MS);
  return { stop, waiting: () => deadline !== null };
}

/**
 * What went wrong, in plain words, and whether trying again may help.
 * @param {any} err an ApiError, an Error, or a turn's `error` event payload
 * @returns {{ text: string, retry: boolean }}
 */
export function plainError(err) {
  const type = err?.type ?? "";
  const status = err?.status ?? 0;
  const message = String(err?.message ?? err ?? "");
  if (type === "network_error" || type === "socket_error")
    return { text: message || "Can't reach the server.", retry: true };
  if (type === "rate_limited")
    return {
      text: `You're sending faster than this key allows.${err.retryAfterSeconds ? ` Try again in ${err.retryAfterSeconds} s.` : " Try again in a moment."}`,
      retry: true,
    };
  if (type === "model_not_configured")
    return { text: "No model is configured on this server, so it can't answer yet.", retry: false };
  if (type === "storage_error") return { text: "The server couldn't save this turn. Try again.", retry: true };
  if (type === "turn_paused")
    return { text: "The assistant is waiting for tool results; answer them first.", retry: false };
  if (type === "context_overflow")
    return {
      text: "This conversation is too long for the model's context. Start a new chat, or let it compact and try again.",
      retry: true,
    };
  if (type === "model_error" || type === "model_unavailable") {
    const provider = err.providerType ?? "";
    if (provider === "overloaded_error" || status === 529)
      return { text: "The model is overloaded right now. Try again in a moment.", retry: true };
    if (provider === "rate_limit_error" || status === 429)
      return { text: "The model's rate limit was reached. Try again in a moment.", retry: true };
    if (status >= 500 || provider === "api_error")
      return { text: "The model had an internal error. Try again.", retry: true };
    return { text: `The model refused the request: ${message.split("; request id")[0]}`, retry: false };
  }
  if (type === "not_found") return { text: "This conversation no longer exists.", retry: false };
  if (type === "authentication_error" || status === 401)
    return { text: "Your API key is no longer valid. Sign in again.", retry: false };
  if (status >= 500) return { text: "The server had a problem. Try again.", retry: true };
  return { text: message || "Something went wrong.", retry: false };
}
