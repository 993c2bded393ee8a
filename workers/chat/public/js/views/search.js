// Search across the tenant's conversations; each message hit opens History at that message.
import { api } from "../api.js";
import { h, replace, time } from "../dom.js";
import { errorLine } from "../render.js";

/** The cortex marks matches with [ and ]; shown as <mark> through text nodes only. @param {string} s */
function snippet(s) {
  const out = [];
  const re = /\[([^\][]*)\]/g;
  let last = 0;
  for (let m; (m = re.exec(s)); ) {
    out.push(s.slice(last, m.index), h("mark", null, m[1]));
    last = m.index + m[0].length;
  }
  out.push(s.slice(last));
  return out;
}

/** @param {HTMLElement} root @param {URLSearchParams} params */
export async function searchView(root, params) {
  const q = (params.get("q") ?? "").trim();
  const input = /** @type {HTMLInputElement} */ (document.getElementById("search-q"));
  if (input) input.value = q;
  const results = h("ol", { class: "results", id: "search-results" });
  replace(root, h("section", { class: "panel" }, h("h1", null, q ? `Search: ${q}` : "Search"), results));
  if (!q) return results.append(h("li", { class: "muted" }, "Type words in the search box above."));
  try {
    const res = await api("GET", `/v1/search?q=${encodeURIComponent(q)}&limit=50`);
    if (!res.results.length) results.append(h("li", { class: "muted" }, "No matches."));
    for (const r of res.results) {
      const href = r.conversationId ? (r.messageId ? `#/c/${r.conversationId}/history?at=${encodeURIComponent(r.messageId)}` : `#/c/${r.conversationId}/history`) : null;
      const label = r.kind === "message" ? `${r.role ?? "message"} #${r.seq ?? "?"}` : r.kind;
      results.append(
        h(
          "li",
          { class: "hit" },
          h("div", null, href ? h("a", { href, class: "hit-link" }, label) : h("strong", null, label), " ", h("span", { class: "muted" }, [r.conversationId ?? "", " · ", time(r.createdAt)])),
          h("div", { class: "snippet" }, snippet(r.snippet ?? "")),
        ),
      );
    }
  } catch (err) {
    results.append(errorLine(err));
  }
}
