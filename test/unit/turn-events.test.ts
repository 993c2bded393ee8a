// The one event module and the one status table: events go to NDJSON and back unchanged whatever
// the chunking, a line that is no event is refused, a kept contract name is followed by its
// rule-named twin, and every error type maps to one status (and each status to one default type).
import { describe, expect, it } from "vitest";
import {
  decodeEvent,
  decodeEvents,
  encodeEvent,
  EVENT_ALIASES,
  EVENT_TYPES,
  toSse,
  withAliases,
  type TurnEvent,
} from "../../core/events";
import { MODEL_NOT_CONFIGURED } from "../../core/model-provider";
import { ERROR_TYPES, errorBody, turnErrorStatus, typeForStatus } from "../../workers/chat/errors";

const card = {
  turnId: "turn_1",
  forced: false,
  targets: 2,
  tokensBefore: 900,
  tokensAfter: 300,
  tokensSaved: 600,
  durationMs: 12,
  summarized: "model" as const,
  details: [],
};
const events: TurnEvent[] = [
  { type: "turn_start", turnId: "turn_1" },
  { type: "delta", turnId: "turn_1", text: "héllo — ☃ 🙂\nnext line" },
  { type: "compaction", ...card },
  { type: "error", turnId: "turn_1", error: { type: "overloaded_error", message: "busy", status: 529 } },
  {
    type: "turn_end",
    turnId: "turn_1",
    stop_reason: "end_turn",
    usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    timing: { serverMs: 1, modelMs: 2, queuedMs: 3 },
  },
];

async function roundTrip(chunkSize: number): Promise<TurnEvent[]> {
  const bytes = new TextEncoder().encode(events.map(encodeEvent).join(""));
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.slice(i, i + chunkSize));
  const out: TurnEvent[] = [];
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => (chunks.forEach((b) => c.enqueue(b)), c.close()),
  }).pipeThrough(decodeEvents());
  for await (const e of stream) out.push(e);
  return out;
}

describe("turn events", () => {
  it("go to NDJSON and back unchanged, however the bytes are cut (mid-line, mid-character)", async () => {
    for (const size of [1, 3, 7, 64, 1 << 16]) expect(await roundTrip(size)).toEqual(events);
    expect(encodeEvent(events[1]).endsWith("\n")).toBe(true);
    expect(encodeEvent(events[1]).slice(0, -1)).not.toContain("\n");
  });

  it("a line that is not a turn event is refused, naming it", () => {
    expect(() => decodeEvent(`{"type":"nonsense","turnId":"t"}`)).toThrow(/not a turn event: \{"type":"nonsense"/);
    expect(() => decodeEvent(`null`)).toThrow(/not a turn event/);
    expect(decodeEvent(JSON.stringify(events[0]))).toEqual(events[0]);
  });

  it("every name of the contract is an event, and a kept name is followed by its rule-named twin", () => {
    for (const name of [
      "delta",
      "tool_use",
      "tool_result",
      "progress",
      "compaction_started",
      "compaction",
      "message",
      "turn_end",
      "error",
    ])
      expect(EVENT_TYPES).toContain(name);
    for (const [kept, ruled] of Object.entries(EVENT_ALIASES)) {
      expect(EVENT_TYPES).toContain(kept);
      expect(EVENT_TYPES).toContain(ruled);
      expect(ruled).toMatch(/^[a-z]+_(started|finished|changed)$/);
    }
    expect(withAliases({ type: "compaction", ...card }).map((e) => e.type)).toEqual([
      "compaction",
      "compaction_finished",
    ]);
    expect(withAliases({ type: "compaction", ...card })[1]).toEqual({ type: "compaction_finished", ...card });
    for (const e of events.filter((e) => e.type !== "compaction")) expect(withAliases(e)).toEqual([e]);
    expect(toSse(events[0])).toBe(`event: turn_start\ndata: ${JSON.stringify(events[0])}\n\n`);
  });
});

describe("the error status table", () => {
  it("gives an untyped error the default type of its status", () => {
    expect(typeForStatus(404)).toBe("not_found");
    expect(typeForStatus(409)).toBe("conflict");
    expect(typeForStatus(429)).toBe("rate_limited");
    expect(typeForStatus(500)).toBe("api_error");
    expect(typeForStatus(418)).toBe("invalid_request");
    expect(errorBody(401, "no key")).toEqual({ error: { type: "authentication_error", message: "no key" } });
    expect(errorBody(409, "waiting", "turn_paused").error.type).toBe("turn_paused");
  });

  it("has one default type per status, and each default type's status maps back to it", () => {
    const defaults = Object.entries(ERROR_TYPES).filter(([, row]) => "default" in row && row.default);
    expect(new Set(defaults.map(([, row]) => row.status)).size).toBe(defaults.length);
    for (const [type, row] of defaults) expect(typeForStatus(row.status)).toBe(type);
  });

  it("answers a turn's own errors with their status and the model's failures with 502", () => {
    expect(turnErrorStatus({ type: "turn_paused" })).toBe(409);
    expect(turnErrorStatus({ type: "invalid_request", status: 400 })).toBe(400);
    expect(turnErrorStatus({ type: "not_found" })).toBe(404);
    expect(turnErrorStatus({ type: "tool_results_conflict", status: 409 })).toBe(409);
    expect(turnErrorStatus({ type: MODEL_NOT_CONFIGURED, status: 503 })).toBe(503);
    expect(turnErrorStatus({ type: "model_unavailable", status: 400 })).toBe(400);
    expect(turnErrorStatus({ type: "model_unavailable", status: 503 })).toBe(503);
    // A model's own error types are not the caller's, whatever the table says of the same name.
    expect(turnErrorStatus({ type: "authentication_error", status: 401 })).toBe(502);
    expect(turnErrorStatus({ type: "conflict" })).toBe(502);
    expect(turnErrorStatus({ type: "overloaded_error", status: 529 })).toBe(502);
    expect(turnErrorStatus({ type: "storage_error" })).toBe(502);
  });
});
