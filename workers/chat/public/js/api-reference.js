// The API reference page: /openapi.json rendered as a list of operations, with their parameters,
// bodies, answers and the stream schemas. Built with the DOM helpers (no innerHTML, no CDN).
import { h } from "./dom.js";

/** @param {any} schema */
const schemaText = (schema) => JSON.stringify(schema, null, 2);

/** @param {string} title @param {any} schema */
function schemaBlock(title, schema) {
  return h("details", null, h("summary", null, title), h("pre", { class: "schema" }, schemaText(schema)));
}

/** @param {string} method @param {string} path @param {any} op */
function operation(method, path, op) {
  const params = (op.parameters ?? []).map((/** @type {any} */ p) =>
    h(
      "li",
      null,
      h("code", null, p.name),
      ` (${p.in}${p.required ? ", required" : ""}) `,
      p.description ?? "",
      p.schema ? schemaBlock("schema", p.schema) : null,
    ),
  );
  const body = op.requestBody
    ? Object.entries(op.requestBody.content).map(([type, c]) =>
        schemaBlock(`body: ${type}`, /** @type {any} */ (c).schema),
      )
    : [];
  const answers = Object.entries(op.responses ?? {}).map(([status, r]) => {
    const res = /** @type {any} */ (r);
    const content = Object.entries(res.content ?? {}).map(([type, c]) =>
      schemaBlock(type, /** @type {any} */ (c).schema),
    );
    return h("li", null, h("code", null, status), " ", res.description ?? (res.$ref ? "Error" : ""), content);
  });
  const extensions = Object.entries(op)
    .filter(([k]) => k.startsWith("x-"))
    .map(([k, v]) => schemaBlock(k, v));
  return h(
    "section",
    { class: "operation", id: op.operationId },
    h("h3", null, h("span", { class: `method ${method}` }, method.toUpperCase()), " ", h("code", null, path)),
    h("p", null, op.summary),
    op.description ? h("p", { class: "muted" }, op.description) : null,
    params.length ? [h("h4", null, "Parameters"), h("ul", null, params)] : null,
    body,
    h("h4", null, "Answers"),
    h("ul", null, answers),
    extensions,
  );
}

async function main() {
  const root = /** @type {HTMLElement} */ (document.getElementById("reference"));
  const res = await fetch("/openapi.json");
  if (!res.ok) {
    root.replaceChildren(h("p", { class: "error" }, `Could not load /openapi.json (${res.status})`));
    return;
  }
  const doc = await res.json();
  const ops = Object.entries(doc.paths).flatMap(([path, byMethod]) =>
    Object.entries(/** @type {any} */ (byMethod)).map(([method, op]) => ({ path, method, op })),
  );
  root.replaceChildren(
    h("h1", null, `${doc.info.title} API`),
    h("p", null, doc.info.description),
    h("h2", null, "Operations"),
    ...ops.map((o) => operation(o.method, o.path, o.op)),
    h("h2", null, "Schemas (errors, stream events, websocket frames)"),
    ...Object.entries(doc.components.schemas).map(([name, schema]) =>
      h(
        "section",
        { class: "schema-def", id: `schema-${name}` },
        h("h3", null, name),
        h("pre", { class: "schema" }, schemaText(schema)),
      ),
    ),
  );
}

main();
