// A real HTTP server for the HTTP tool tests (vitest globalSetup, in Node): the workers under test
// call it over loopback (ALLOW_LOOPBACK_TOOLS=true in the test bindings). Each path shapes one
// kind of answer; every request is recorded by its `key` query parameter so a test can count
// attempts and see exactly which headers arrived.
import { createServer } from "node:http";

/** @type {Map<string, {method: string, path: string, headers: Record<string, string | string[] | undefined>, body: string}[]>} */
const seen = new Map();

function handle(req, res, body) {
  const url = new URL(req.url, "http://x");
  const key = url.searchParams.get("key") ?? "";
  const send = (status, text, headers = {}) => {
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
    res.end(text);
  };
  if (url.pathname === "/_seen")
    return send(200, JSON.stringify(seen.get(key) ?? []), { "content-type": "application/json" });
  const log = seen.get(key) ?? [];
  log.push({ method: req.method, path: url.pathname, headers: req.headers, body });
  seen.set(key, log);
  const n = log.length;
  switch (url.pathname) {
    case "/echo":
      return send(
        200,
        JSON.stringify({
          received: JSON.parse(body || "null"),
          headers: req.headers,
          token: (req.headers.authorization ?? "").replace(/^Bearer /, ""),
        }),
        { "content-type": "application/json" },
      );
    case "/big": {
      const bytes = Number(url.searchParams.get("bytes"));
      const line = "lorem ipsum dolor sit amet payload line of the big http tool answer\n";
      const text = `${line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes - 12)}END-OF-BODY\n`;
      return send(200, text);
    }
    case "/status":
      return send(
        Number(url.searchParams.get("code")),
        `boom ${url.searchParams.get("code")} details from the endpoint`,
      );
    case "/flaky": {
      const fail = Number(url.searchParams.get("fail"));
      return n <= fail
        ? send(Number(url.searchParams.get("code") ?? 503), `failing attempt ${n}`)
        : send(200, `ok on attempt ${n}`);
    }
    case "/drop":
      return req.socket.destroy();
    case "/slow":
      return void setTimeout(() => send(200, "late"), Number(url.searchParams.get("ms")));
    case "/redirect":
      return send(Number(url.searchParams.get("code") ?? 307), "", { location: url.searchParams.get("to") });
    default:
      return send(404, "no such test path");
  }
}

export default async function setup({ provide }) {
  // Node's 16 KB header limit is less than a tool may send (20 values of 4,096 characters).
  const server = createServer({ maxHeaderSize: 512 * 1024 }, (req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  provide("httpToolServer", `http://127.0.0.1:${server.address().port}`);
  return () => new Promise((resolve) => server.close(resolve));
}
