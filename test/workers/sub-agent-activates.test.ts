// A tool a sub-agent activates reaches its next request and runs: its requests are built from the
// conversation's live active tools (tool_activate: "Its schema is available from your next step on"),
// not from the master's request as it was when it delegated.
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { blocksOf } from "../blocks";
import { createConversation, send, transcript } from "./helpers";

type Params = { system?: unknown; tools?: { name: string }[] };
type StreamFn = (this: unknown, params: Params, ...rest: unknown[]) => unknown;
// The SDK's class as the DO uses it (the module is shared): every request's params are copied here.
const messagesProto = (Anthropic as unknown as { Messages: { prototype: { stream: StreamFn } } }).Messages.prototype;
const original = messagesProto.stream;
let captured: Params[] = [];

beforeEach(() => {
  captured = [];
  messagesProto.stream = function (this: unknown, params: Params, ...rest: unknown[]) {
    captured.push(JSON.parse(JSON.stringify(params)));
    return original.call(this, params, ...rest);
  };
});

afterEach(() => {
  messagesProto.stream = original;
});

const delegate = (name: string, task: string) => `@tool agent_delegate ${JSON.stringify({ name, task })}`;
const subAgentRequests = () => captured.filter((p) => JSON.stringify(p.system).includes("You are a sub-agent"));

describe("a tool a sub-agent activates", () => {
  it("is offered in the sub-agent's next request and its call runs", async () => {
    const id = await createConversation();
    await send(id, `@tool tool_activate {"name":"agent_delegate"}`);
    captured = [];
    const task = [
      "Activate and use it.",
      "@tools-per-step 1",
      '@tool tool_activate {"name":"conversation_list"}',
      "@tool conversation_list {}",
    ].join("\n");
    await send(id, delegate("act", task));

    const requests = subAgentRequests();
    expect(requests.length).toBeGreaterThanOrEqual(2);
    const names = (p: Params) => (p.tools ?? []).map((t) => t.name);
    expect(names(requests[0])).not.toContain("conversation_list");
    expect(names(requests[1])).toContain("conversation_list");
    // Still no delegation inside a sub-agent.
    expect(names(requests[1])).not.toContain("agent_delegate");

    const all = await transcript(id);
    const segment = all.filter((m) => m.agent);
    const uses = segment.flatMap((m) => blocksOf(m.content, "tool_use"));
    const listCall = uses.find((u) => u.name === "conversation_list");
    expect(listCall).toBeDefined();
    const result = segment
      .flatMap((m) => blocksOf(m.content, "tool_result"))
      .find((r) => r.tool_use_id === listCall?.id);
    expect(result).toBeDefined();
    expect(result?.is_error).not.toBe(true);
  });

  it("activated by the master in the step that delegates, is offered in the sub-agent's first request", async () => {
    const id = await createConversation();
    await send(id, `@tool tool_activate {"name":"agent_delegate"}`);
    captured = [];
    await send(
      id,
      `@tool tool_activate {"name":"conversation_list"}\n${delegate("lister", "List them.\n@tool conversation_list {}")}`,
    );

    const requests = subAgentRequests();
    expect(requests.length).toBeGreaterThanOrEqual(1);
    expect((requests[0].tools ?? []).map((t) => t.name)).toContain("conversation_list");
    const segment = (await transcript(id)).filter((m) => m.agent);
    const results = segment.flatMap((m) => blocksOf(m.content, "tool_result"));
    expect(results.length).toBeGreaterThanOrEqual(1);
    expect(results.every((r) => r.is_error !== true)).toBe(true);
  });
});
