// The only place that talks to the API. The key lives in sessionStorage (this tab only, gone when
// it closes) and travels in the Authorization header; websockets use single-use tickets instead,
// so the key never appears in a URL.

const KEY_SLOT = "context-chat.apiKey";

export const session = {
  get key() {
    return sessionStorage.getItem(KEY_SLOT);
  },
  /** @param {string} key */
  signIn(key) {
    sessionStorage.setItem(KEY_SLOT, key);
  },
  signOut() {
    sessionStorage.removeItem(KEY_SLOT);
  },
};

export class ApiError extends Error {
  /** @param {number} status @param {string} type @param {string} message */
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
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
  if (res.status === 401 && signedIn) window.dispatchEvent(new CustomEvent("unauthorized"));
  return err;
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {string} [key] defaults to the signed-in key
 */
export async function api(method, path, body, key = session.key ?? "") {
  /** @type {Record<string, string>} */
  const headers = { authorization: `Bearer ${key}`, accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
  const text = await res.text();
  if (!res.ok) throw failure(res, text, key === session.key);
  return text ? JSON.parse(text) : null;
}

/** Every page of a `{messages|cards, next}` listing. @param {string} path @param {string} field */
export async function allPages(path, field, limit = 500) {
  const out = [];
  let after = 0;
  for (;;) {
    const page = await api("GET", `${path}?after=${after}&limit=${limit}`);
    out.push(...page[field]);
    if (!page.next) return out;
    after = page.next;
  }
}

/**
 * Streams a file into the conversation as an attachment. XMLHttpRequest because fetch cannot
 * report upload progress.
 * @param {string} conversationId
 * @param {File} file
 * @param {(sent: number, total: number) => void} onProgress
 * @returns {{ done: Promise<{id: string, note: string, size: number}>, abort: () => void }}
 */
export function uploadAttachment(conversationId, file, onProgress) {
  const xhr = new XMLHttpRequest();
  const done = new Promise((resolve, reject) => {
    xhr.open("POST", `/v1/conversations/${encodeURIComponent(conversationId)}/attachments?name=${encodeURIComponent(file.name)}`);
    xhr.setRequestHeader("authorization", `Bearer ${session.key ?? ""}`);
    xhr.setRequestHeader("content-type", file.type || "application/octet-stream");
    xhr.upload.addEventListener("progress", (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size));
    xhr.addEventListener("load", () => (xhr.status === 201 ? resolve(JSON.parse(xhr.responseText)) : reject(failure(xhr, xhr.responseText))));
    xhr.addEventListener("error", () => reject(new ApiError(0, "network_error", "the upload failed (network)")));
    xhr.addEventListener("abort", () => reject(new ApiError(0, "aborted", "upload cancelled")));
    xhr.send(file);
  });
  return { done, abort: () => xhr.abort() };
}

/**
 * Opens the conversation's websocket with a fresh single-use ticket.
 * @param {string} conversationId
 * @param {(event: any) => void} onEvent
 * @param {() => void} onClose
 * @returns {Promise<WebSocket>}
 */
export async function openSocket(conversationId, onEvent, onClose) {
  const { ticket } = await api("POST", `/v1/conversations/${encodeURIComponent(conversationId)}/ws-ticket`);
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/v1/conversations/${encodeURIComponent(conversationId)}/ws?ticket=${encodeURIComponent(ticket)}`);
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
    ws.addEventListener("error", () => reject(new ApiError(0, "socket_error", "the websocket could not connect")), { once: true });
  });
}
