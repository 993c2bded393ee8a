// A paused turn's races: results posted while a stop ends the wait (the post is refused 409 with
// nothing taken, or it went through first and the stop answers after it; never a 502 "object
// restarted" with the results thrown away), and a regenerate of an exchange that took a file
// uploaded during its pause (the file's note stays in what the model sees).
import { describe, expect, it } from "vitest";
import { toToolResultBlock } from "../../core/client-tools";
import type { TurnEvent } from "../../core/events";
import type { TurnIntake } from "../../durable-objects/conversation/turn-intake";
import { api, connectSocket, createConversation, inConversation, transcript } from "./helpers";
import { ofType, resultText } from "../blocks";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

async function pausedTurn(id: string, city: string) {
  const paused = await api("POST", `/v1/conversations/${id}/messages`, {
    content: `@tool get_weather {"city":"${city}"}`,
    tools: [weather],
  });
  expect(paused.json.stop_reason).toBe("requires_action");
  const [call] = paused.json.requires_action!.calls;
  return { turnId: paused.json.turnId as string, call };
}

/** The text of the result the transcript saved for the call `callId`. */
async function savedResult(id: string, callId: string): Promise<string> {
  const answer = (await transcript(id)).find((m) =>
    m.content.some((b) => b.type === "tool_result" && b.tool_use_id === callId),
  );
  return resultText(
    ofType(
      answer!.content.find((b) => b.type === "tool_result"),
      "tool_result",
    ),
  );
}

describe("a paused turn's races", () => {
  it("a tool-results post racing a stop is refused 409 with its key free, or taken before the stop: never a 502", async () => {
    for (let round = 0; round < 4; round++) {
      const id = await createConversation();
      const { turnId, call } = await pausedTurn(id, `Paris ${round}`);
      const key = `race-${round}`;
      const [stop, posted] = await Promise.all([
        api("POST", `/v1/conversations/${id}/stop`, {}),
        api(
          "POST",
          `/v1/conversations/${id}/tool-results`,
          { results: [{ tool_use_id: call.id, content: "sunny" }] },
          { headers: { "idempotency-key": key } },
        ),
      ]);
      expect(stop.status).toBe(200);
      expect(stop.json).toEqual({ turnId, stopped: true });
      const result = await savedResult(id, call.id);
      if (posted.status === 409) {
        // The stop closed the wait first: nothing of the post was taken, and the key is free again.
        expect(posted.json.error?.type).toBe("tool_results_conflict");
        expect(result).not.toBe("sunny");
        const retry = await api(
          "POST",
          `/v1/conversations/${id}/tool-results`,
          { results: [{ tool_use_id: call.id, content: "sunny" }] },
          { headers: { "idempotency-key": key } },
        );
        expect(retry.status).toBe(409);
        expect(retry.headers.get("idempotent-replayed")).toBeNull();
      } else {
        // Taken before the stop: the results are saved and the post hears how its turn ended.
        expect(posted.status).toBe(200);
        expect(posted.json.turnId).toBe(turnId);
        expect(posted.json.stop_reason).toBe("interrupted");
        expect(result).toBe("sunny");
      }
      // The wait is over either way: the conversation takes turns again.
      expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toBeUndefined();
      expect((await api("POST", `/v1/conversations/${id}/messages`, { content: "and now?" })).status).toBe(200);
    }
  });

  it("a `tool_results` frame racing a stop is refused or taken, and its turn's end is always heard", async () => {
    const id = await createConversation();
    const { turnId, call } = await pausedTurn(id, "Lyon");
    const c = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    const [stop] = await Promise.all([
      api("POST", `/v1/conversations/${id}/stop`, {}),
      c.ws!.send(JSON.stringify({ type: "tool_results", results: [{ tool_use_id: call.id, content: "mild" }] })),
    ]);
    expect(stop.json).toEqual({ turnId, stopped: true });
    const end = ofType(await c.next((e) => e.type === "turn_end" && e.turnId === turnId), "turn_end");
    expect(end.stop_reason).toBe("interrupted");
    // The frame's results were refused to this socket, or saved: never taken and thrown away.
    const result = await savedResult(id, call.id);
    if (result !== "mild")
      expect(await c.next((e) => e.type === "error")).toMatchObject({ error: { type: "tool_results_conflict" } });
    // Nothing is left paused, nor a second resume that would end the turn twice.
    expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toBeUndefined();
    expect((await api("POST", `/v1/conversations/${id}/messages`, { content: "next" })).status).toBe(200);
    const ends = c.events.filter((e) => e.type === "turn_end" && e.turnId === turnId);
    expect(ends).toHaveLength(1);
    c.ws!.close();
  });

  it("a post checked while the pause exists never writes it back after the turn's resume removed it", async () => {
    const id = await createConversation();
    const { call } = await pausedTurn(id, "Bergen");
    const left = await inConversation(id, async (i, state) => {
      const turn = (await i.paused.get())!;
      // The post is checked, and its write held in flight; meanwhile the resume that ends the turn
      // (a stop's, an expired wait's) clears the pause.
      const held = i.paused as unknown as { write?: (t: unknown) => Promise<void> };
      const write = held.write!.bind(i.paused);
      let reached!: () => void;
      let release!: () => void;
      const writing = new Promise<void>((r) => (reached = r));
      const gate = new Promise<void>((r) => (release = r));
      held.write = async (t) => (reached(), await gate, write(t));
      const posted = i.paused.accept([{ tool_use_id: call.id, content: "rain" }], toToolResultBlock);
      await writing;
      const removed = i.paused.resumed(turn);
      await Promise.race([removed, new Promise((r) => setTimeout(r, 100))]);
      release();
      await Promise.all([posted, removed]);
      delete held.write;
      return { cached: await i.paused.get(), stored: await state.storage.get("paused-turn") };
    });
    expect(left).toEqual({ cached: null, stored: undefined });
  });

  it("a continuation queued for a turn that no longer waits tells its caller how the turn ended", async () => {
    const id = await createConversation();
    const { turnId } = await pausedTurn(id, "Tromsø");
    expect((await api("POST", `/v1/conversations/${id}/stop`, {})).json).toEqual({ turnId, stopped: true });
    const heard = await inConversation(id, async (i) => {
      const { intake } = i as unknown as { intake: TurnIntake };
      const ref = { tenantId: i.record.head!.tenantId, conversationId: id };
      const hear = async (named: string) => {
        const events: TurnEvent[] = [];
        await intake.enqueueResume({ ref, turnId: named, sink: (e) => events.push(e) });
        return events.map((e) => [
          e.type,
          e.type === "turn_end" ? e.stop_reason : e.type === "error" ? e.error.type : null,
        ]);
      };
      return { stopped: await hear(turnId), unknown: await hear("turn_never_paused") };
    });
    expect(heard.stopped).toEqual([
      ["turn_start", null],
      ["turn_end", "interrupted"],
    ]);
    expect(heard.unknown).toEqual([
      ["turn_start", null],
      ["error", "tool_results_conflict"],
      ["turn_end", "error"],
    ]);
  });

  it("a regenerate keeps the note of a file uploaded while the turn waited: it is not superseded", async () => {
    const id = await createConversation();
    const { call } = await pausedTurn(id, "Oslo");
    const up = await api("POST", `/v1/conversations/${id}/attachments?name=zebrafile.txt`, "line one\nline two", {
      headers: { "content-type": "text/plain" },
    });
    expect(up.status).toBe(201);
    const posted = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: [{ tool_use_id: call.id, content: "snow" }],
    });
    expect(posted.status).toBe(200);
    const replayOf = async () => JSON.stringify((await api("GET", `/v1/conversations/${id}/replay`)).json.messages);
    expect(await replayOf()).toContain("zebrafile");
    const before = await transcript(id);
    const note = before.find((m) => m.role === "user" && JSON.stringify(m.content).includes("zebrafile"))!;
    // Mid-exchange: the tool_use before it, its results and the reply after it.
    expect(note.seq).toBeLessThan(before.at(-1)!.seq);

    const again = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true, tools: [weather] });
    expect(again.status).toBe(200);
    expect(await replayOf()).toContain("zebrafile");
    // The transcript's marks agree with the replay: the note is not marked, the rest of the exchange is.
    const after = await transcript(id);
    const replaced = after.filter((m) => m.seq <= before.at(-1)!.seq);
    expect(replaced.find((m) => m.id === note.id)?.superseded).toBeUndefined();
    expect(replaced.filter((m) => m.id !== note.id).every((m) => m.superseded)).toBe(true);
    // The event names exactly the messages superseded: the note is not among them.
    expect(again.json.superseded?.messageIds).toEqual(replaced.filter((m) => m.id !== note.id).map((m) => m.id));
    expect(again.json.superseded).toMatchObject({ fromSeq: before[0].seq, toSeq: before.at(-1)!.seq });
  });
});
