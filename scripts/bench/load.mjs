// bench:load — many conversations in parallel, several senders per conversation over JSON, SSE
// and websockets mixed, with folds and attachment indexing running meanwhile; then an audit:
// every sent message present exactly once, in order, in the transcript, the replay source and the
// cortex index. Loopback only, bounded in count and time.
//
//   npm run bench:load -- [--conversations 24] [--senders 3] [--turns 5] [--pdfs 2] [--pdf-pages 150] [--deadline 150]
import { PDFDocument, StandardFonts } from "pdf-lib";
import { apiClient, quantile, withStack } from "./common.mjs";

const TRANSPORTS = ["json", "sse", "ws"];

function flags(argv) {
  const out = {
    conversations: 24,
    senders: 3,
    turns: 5,
    pdfs: 2,
    "pdf-pages": 150,
    deadline: 150,
    "reply-chars": 400,
    "fold-threshold": 3000,
  };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!m || !(m[1] in out))
      throw new Error(
        `unknown flag ${argv[i]}; flags: ${Object.keys(out)
          .map((k) => `--${k}`)
          .join(" ")}`,
      );
    out[m[1]] = Number(m[2] ?? argv[++i]);
    if (!Number.isFinite(out[m[1]]) || out[m[1]] < 0) throw new Error(`--${m[1]} needs a number`);
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Counts of what the run met that is not a turn failure (HTTP 429s, retried). */
const seen = { http429: 0, retried5xx: 0 };

/** The client's fetch: waits out a 429 (a rate limiter may sit in front) and reports it. */
async function patientFetch(url, init, tries = 20) {
  for (let i = 0; ; i++) {
    const res = await fetch(url, init);
    if (res.status !== 429 || i >= tries) return res;
    seen.http429++;
    await sleep(Math.min(5000, 1000 * Number(res.headers.get("retry-after") ?? 1)));
  }
}

let client;

async function json(method, path, body) {
  const r = await client.send(
    method,
    path,
    body ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } } : {},
  );
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.data;
}

/** One turn over plain JSON: the saved messages from the body, server time from Server-Timing. */
async function turnJson(id, content) {
  const t0 = performance.now();
  const r = await client.request("POST /v1/conversations/{id}/messages", { path: { id }, body: { content } });
  const timing = r.headers.get("server-timing") ?? "";
  const app = Number(/app;dur=(\d+(?:\.\d+)?)/.exec(timing)?.[1] ?? NaN);
  return {
    ok: r.status === 200,
    status: r.status,
    error: r.data?.error,
    messages: r.data?.messages ?? [],
    serverMs: app,
    wallMs: performance.now() - t0,
  };
}

/** One turn over SSE (the client's event iterator): saved messages from `message` events, server time from `turn_end`. */
async function turnSse(id, content) {
  const t0 = performance.now();
  const events = [];
  try {
    for await (const e of client.turn(id, { content })) events.push(e);
  } catch (err) {
    return {
      ok: false,
      status: err.status ?? 0,
      error: err.body?.error ?? String(err),
      messages: [],
      serverMs: NaN,
      wallMs: performance.now() - t0,
    };
  }
  const end = events.find((e) => e.type === "turn_end");
  const error = events.find((e) => e.type === "error");
  return {
    ok: !!end && end.stop_reason !== "error" && !error,
    status: 200,
    error: error?.error,
    messages: events.filter((e) => e.type === "message").map((e) => e.message),
    serverMs: end?.timing.serverMs ?? NaN,
    wallMs: performance.now() - t0,
  };
}

/** A websocket sender: its own socket (the client's); its turn is the one whose user message carries its marker. */
class SocketSender {
  constructor(id) {
    this.id = id;
  }

  async open() {
    this.socket = await client.socket(this.id);
  }

  async turn(content, marker) {
    const t0 = performance.now();
    const from = this.socket.frames.length;
    this.socket.send({ type: "send", content });
    const mine = await this.socket.next(
      (e) => e.type === "message" && e.message.role === "user" && e.message.content[0]?.text?.includes(marker),
      60_000,
    );
    const end = await this.socket.next((e) => e.type === "turn_end" && e.turnId === mine.turnId, 60_000);
    const frames = this.socket.frames.slice(from).filter((e) => e.turnId === mine.turnId);
    const error = frames.find((e) => e.type === "error");
    const messages = frames.filter((e) => e.type === "message").map((e) => e.message);
    return {
      ok: end.stop_reason !== "error" && !error,
      status: 200,
      error: error?.error,
      messages,
      serverMs: end.timing.serverMs,
      wallMs: performance.now() - t0,
    };
  }

  close() {
    this.socket.close();
  }
}

async function pdfBytes(pages) {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++)
    doc.addPage([300, 200]).drawText(`page ${i} loadpage${i}`, { x: 20, y: 100, font, size: 12 });
  return doc.save();
}

async function upload(id, name, type, body) {
  const r = await client.request("POST /v1/conversations/{id}/attachments", {
    path: { id },
    query: { name },
    body,
    headers: { "content-type": type },
  });
  if (r.status !== 201) throw new Error(`upload ${name}: ${r.status} ${r.text.slice(0, 200)}`);
  return r.data;
}

/** The whole transcript, through the client's cursor-following iterator. */
async function transcript(id) {
  const all = [];
  for await (const m of client.messages(id, { pageSize: 500 })) all.push(m);
  return all;
}

const textOfWire = (m) =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("\n");

export async function benchLoad(argv = []) {
  const f = flags(argv);
  const run = Math.random().toString(36).slice(2, 8);
  const settings = { foldThresholdChars: f["fold-threshold"], summaryMaxChars: 1500 };
  await withStack(async (base) => {
    client = await apiClient(base, { fetch: patientFetch });
    const convs = [];
    for (let c = 0; c < f.conversations; c++)
      convs.push((await json("POST", "/v1/conversations", { title: `load ${c}`, settings })).id);
    const pdf = f.pdfs ? await pdfBytes(f["pdf-pages"]) : null;
    const deadline = Date.now() + f.deadline * 1000;
    const turns = [];
    const notes = new Map(convs.map((id) => [id, []]));

    // Background: PDF first searches (page extraction through the queue) on their own conversations.
    const background = Array.from({ length: f.pdfs }, async (_, i) => {
      const id = (await json("POST", "/v1/conversations", { title: `pdf ${i}` })).id;
      const att = await upload(id, `load-${i}.pdf`, "application/pdf", pdf);
      const t0 = performance.now();
      const r = await turnJson(
        id,
        `@tool pdf_search {"attachment_id":"${att.id}","query":"loadpage${f["pdf-pages"]}"}`,
      );
      let pages = 0;
      for (let k = 0; k < 120 && pages < f["pdf-pages"] && Date.now() < deadline; k++) {
        pages = (await json("GET", `/v1/conversations/${id}/attachments/${att.id}`)).pagesIndexed;
        if (pages < f["pdf-pages"]) await sleep(500);
      }
      return { ok: r.ok, pages, ms: performance.now() - t0 };
    });

    const t0 = performance.now();
    const senders = [];
    convs.forEach((id, c) => {
      for (let s = 0; s < f.senders; s++) {
        const transport = TRANSPORTS[(c + s) % TRANSPORTS.length];
        senders.push(
          (async () => {
            const socket = transport === "ws" ? new SocketSender(id) : null;
            await socket?.open();
            for (let t = 0; t < f.turns && Date.now() < deadline; t++) {
              const marker = `lm${run}c${c}s${s}t${t}`;
              const content = `load turn ${marker} from sender ${s}\n@reply-chars ${f["reply-chars"]}`;
              const sent = performance.now() - t0;
              const r =
                transport === "json"
                  ? await turnJson(id, content)
                  : transport === "sse"
                    ? await turnSse(id, content)
                    : await socket.turn(content, marker);
              turns.push({ id, c, s, t, transport, marker, sent, ...r });
              // Midway, the first sender also attaches a small file: its note joins the turn order.
              if (s === 0 && t === 1)
                notes
                  .get(id)
                  .push(
                    (await upload(id, `notes-${c}.txt`, "text/plain", `attachment for ${marker}\n`.repeat(200))).note,
                  );
            }
            socket?.close();
          })(),
        );
      }
    });
    await Promise.all(senders);
    const elapsed = (performance.now() - t0) / 1000;
    const pdfResults = await Promise.all(background);

    // Let the background settle: folds in flight, then indexing (the audit reads the index).
    const metas = new Map();
    for (const id of convs) {
      for (let k = 0; k < 40; k++) {
        const m = await json("GET", `/v1/conversations/${id}`);
        metas.set(id, m);
        if (!m.foldInFlight) break;
        await sleep(250);
      }
    }

    // ---- the audit --------------------------------------------------------------------------
    const problems = [];
    const audit = { transcript: 0, replayTail: 0, folded: 0, index: 0, sent: turns.length };
    let lost = 0;
    for (const id of convs) {
      const t = await transcript(id);
      const meta = metas.get(id);
      const mine = turns.filter((x) => x.id === id);
      if (t.some((m, i) => m.seq !== i + 1)) problems.push(`${id}: seqs not contiguous`);
      const bySeq = new Map(t.map((m) => [m.seq, m]));
      // What the clients were told was saved is byte-identical to the transcript, and nothing else is in it.
      const accounted = new Set();
      for (const turn of mine)
        for (const m of turn.messages) {
          if (JSON.stringify(bySeq.get(m.seq)) !== JSON.stringify(m))
            problems.push(`${id}: seq ${m.seq} differs from what the client was told`);
          accounted.add(m.seq);
        }
      for (const m of t)
        if (!accounted.has(m.seq) && !notes.get(id).includes(textOfWire(m)))
          problems.push(`${id}: seq ${m.seq} was never reported to a client`);
      // Every sent message exactly once, each sender's in its send order.
      const seqOf = new Map();
      for (const turn of mine) {
        const hits = t.filter((m) => m.role === "user" && textOfWire(m).includes(turn.marker));
        if (hits.length !== 1) {
          problems.push(`${turn.marker}: ${hits.length} times in the transcript`);
          lost += hits.length === 0 ? 1 : 0;
        } else {
          seqOf.set(turn.marker, hits[0]);
          audit.transcript++;
        }
      }
      for (let s = 0; s < f.senders; s++) {
        const seqs = mine
          .filter((x) => x.s === s)
          .sort((a, b) => a.t - b.t)
          .map((x) => seqOf.get(x.marker)?.seq ?? 0);
        if (seqs.some((q, i) => i > 0 && q <= seqs[i - 1]))
          problems.push(`${id} sender ${s}: out of order ${seqs.join(",")}`);
      }
      // The replay source: the summary covers seq <= summarizedThroughMessage; the rest is the verbatim tail, once each, in order.
      const through = meta.summarizedThroughMessage ?? 0;
      if (meta.summary && meta.summary.length > settings.summaryMaxChars) problems.push(`${id}: summary over its cap`);
      const replay = await json("GET", `/v1/conversations/${id}/replay`);
      const tail = replay.messages
        .slice(meta.summary ? 2 : 0)
        .map(textOfWire)
        .join("\n");
      // A folded message is covered when the replay tells the model how to get it back: the
      // preamble's conversation_read pointer names this conversation and a seq range holding it
      // (its bytes are then what that call returns, checked above against what the client was told).
      // The summary's prose is lossy by design; it is not what "covered" can mean.
      const pointer = meta.summary
        ? /conversation_read (\{[^\n]*?\}) reads/.exec(textOfWire(replay.messages[0]))
        : null;
      const range = pointer ? JSON.parse(pointer[1]) : null;
      let cursor = -1;
      for (const turn of [...mine].sort((a, b) => (seqOf.get(a.marker)?.seq ?? 0) - (seqOf.get(b.marker)?.seq ?? 0))) {
        const m = seqOf.get(turn.marker);
        if (!m) continue;
        if (m.seq <= through) {
          if (range?.conversation_id === id && range.from_seq <= m.seq && m.seq <= range.to_seq) audit.folded++;
          else problems.push(`${turn.marker}: folded at seq ${m.seq}, but no recovery call in the replay names it`);
          continue;
        }
        const at = tail.indexOf(turn.marker);
        // The reply quotes no marker (it is prose of its own), so the user's text is its only carrier.
        if (at < 0 || tail.indexOf(turn.marker, at + 1) >= 0 || at < cursor)
          problems.push(`${turn.marker}: not once and in order in the replay tail`);
        else audit.replayTail++;
        cursor = at;
      }
    }
    // The cortex: each sent message indexed exactly once (indexing runs after each turn; wait for it).
    const pending = turns.filter((x) => x.ok);
    const indexDeadline = Date.now() + 60_000;
    const checkIndex = async (turn) => {
      for (;;) {
        const r = await json(
          "GET",
          `/v1/search?q=${encodeURIComponent(turn.marker)}&conversation=${turn.id}&kind=message&limit=10`,
        );
        const users = r.data.filter((h) => h.role === "user");
        if (users.length === 1 && users[0].messageId === turn.messages[0]?.id) return true;
        if (users.length > 1 || Date.now() > indexDeadline) return false;
        await sleep(500);
      }
    };
    for (let i = 0; i < pending.length; i += 16) {
      const ok = await Promise.all(pending.slice(i, i + 16).map(checkIndex));
      ok.forEach((good, k) =>
        good ? audit.index++ : problems.push(`${pending[i + k].marker}: not exactly once in the index`),
      );
    }

    // ---- figures ----------------------------------------------------------------------------
    const ok = turns.filter((x) => x.ok);
    const failed = turns.filter((x) => !x.ok);
    const server = ok.map((x) => x.serverMs).filter(Number.isFinite);
    const folds = [...metas.values()].reduce((n, m) => n + m.foldCount, 0);
    const folded = [...metas.values()].filter((m) => m.foldCount > 0).length;
    const per = TRANSPORTS.map((tr) => {
      const xs = ok.filter((x) => x.transport === tr).map((x) => x.serverMs);
      return `${tr} ${xs.length} (p50 ${quantile(xs, 0.5)?.toFixed(0)} / p99 ${quantile(xs, 0.99)?.toFixed(0)} ms)`;
    });
    const wall = ok.map((x) => x.wallMs);
    const expected = f.conversations * f.senders * f.turns;
    console.log(`
bench:load — ${f.conversations} conversations × ${f.senders} senders × ${f.turns} turns over loopback (JSON, SSE and websocket senders mixed)
  turns             ${ok.length} ok of ${expected} planned, ${failed.length} failed${failed.length ? ` (${[...new Set(failed.map((x) => x.error?.type ?? x.status))].join(", ")})` : ""}
  duration          ${elapsed.toFixed(1)} s  →  ${(ok.length / elapsed).toFixed(1)} turns/s
  server time/turn  p50 ${quantile(server, 0.5).toFixed(0)} ms, p99 ${quantile(server, 0.99).toFixed(0)} ms (model time excluded; Server-Timing app / turn_end serverMs)
                    ${per.join("; ")}
  wall time/turn    p50 ${quantile(wall, 0.5).toFixed(0)} ms, p99 ${quantile(wall, 0.99).toFixed(0)} ms (queueing behind the conversation's other senders included)
  meanwhile         ${folds} folds applied (${folded} of ${f.conversations} conversations folded), ${f.conversations} text attachments noted, ${pdfResults.length} PDF first searches: ${pdfResults.map((p) => `${p.pages}/${f["pdf-pages"]} pages indexed`).join(", ") || "none"}
  HTTP 429s         ${seen.http429} (waited out and retried)
  audit             ${audit.transcript}/${audit.sent} sent messages exactly once and in sender order in the transcript; every saved message byte-identical to what its client was told
                    replay source: ${audit.replayTail} once and in order in the verbatim tail + ${audit.folded} folded, each named by the preamble's conversation_read range
                    index: ${audit.index}/${ok.length} found exactly once by GET /v1/search?q=<marker>&conversation=
  data lost         ${lost} messages; ${problems.length} audit problems`);
    if (problems.length) {
      console.log(
        problems
          .slice(0, 20)
          .map((p) => `  ! ${p}`)
          .join("\n"),
      );
      process.exitCode = 1;
    }
  });
}
