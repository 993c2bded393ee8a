// Stale tool-result stubs end to end inside workerd: both rebuild paths, determinism, and
// byte-exact recovery through the call each stub names.
import { describe, expect, it } from "vitest";
import { api, createConversation, modelCount, send, transcript } from "./helpers";
import { toolResults, resultText } from "../blocks";
import type { WireMessage } from "../../core/types";

const results = (messages: WireMessage[]) => toolResults(messages);

describe("stubs", () => {
  it("replace stale results deterministically in both paths, and the named call returns the bytes", async () => {
    const id = await createConversation({ stubBatchChars: 0 });
    const big = await send(id, "write it\n@reply-chars 25000");
    const bigMsg = big.json.messages[1];
    await send(id, `@tool conversation_read {"message_id":"${bigMsg.id}"}`);
    await send(id, "small talk one");
    await send(id, "small talk two");

    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    const again = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(JSON.stringify(again)).toBe(JSON.stringify(replay));
    const [stub] = results(replay.messages as WireMessage[]);
    const stubText = resultText(stub);
    expect(stubText.length).toBeLessThan(2000);
    expect(replay.estimate.stubbedResults).toBe(1);
    expect(replay.estimate.stubSavedChars).toBeGreaterThan(20000);

    // The stored transcript keeps the full result.
    const stored = results(await transcript(id))[0];
    expect(stored.content.length).toBeGreaterThan(25000);

    // The call the stub names returns the original bytes.
    // The recovery call is the last one the stub names (the first is the stubbed call itself).
    const call = [...stubText.matchAll(/conversation_read (\{[^}]*\})/g)].at(-1)![1];
    expect(JSON.parse(call)).toMatchObject({ conversation_id: id, block: 0 });
    const read = await send(id, `@tool conversation_read ${call}`);
    const page = read.json.messages[2].content[0].content as string;
    expect(page.slice(page.indexOf("\n") + 1)).toBe(stored.content);

    // Path 2: the model's next request counts exactly what the replay shows, plus the new prompt.
    const now = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    const next = "one more question";
    const expected = await modelCount(now, next);
    const u = (await send(id, next)).json.usage;
    expect(u!.input_tokens + u!.cache_read_input_tokens + u!.cache_creation_input_tokens).toBe(expected);
  });

  it("hold small stale results back until their batch fills", async () => {
    const id = await createConversation({ stubBatchChars: 60_000 });
    const big = await send(id, "@reply-chars 25000");
    await send(id, `@tool conversation_read {"message_id":"${big.json.messages[1].id}"}`);
    // Two exchanges on, the first read is stale and waits (fewer than STUB_BATCH_MAX_WAIT exchanges).
    for (let i = 0; i < 2; i++) await send(id, `small talk ${i}`);
    const held = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(held.estimate.stubbedResults).toBe(0);
    expect(held.estimate.stubPendingChars).toBeGreaterThan(25000);
    await send(id, `@tool conversation_read {"message_id":"${big.json.messages[1].id}"}`);
    await send(id, `@tool conversation_read {"message_id":"${big.json.messages[1].id}"}`);
    for (let i = 0; i < 2; i++) await send(id, `more talk ${i}`);
    const jumped = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(jumped.estimate.stubbedResults).toBe(3);
    expect(jumped.estimate.stubPendingChars).toBe(0);
  });
});
