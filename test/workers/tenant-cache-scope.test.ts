// The provider's prompt cache is shared by every request of one account, and all tenants share
// one. A tenant's usage (cache_read_input_tokens, and the cost that follows it) must not tell it
// what another tenant sent: every cached request the platform sends for a tenant opens its system
// prompt with that tenant's own scope line (core/system-prompt.ts, CacheScope), so no cache entry
// past the shared tools is read across tenants. The offline model keeps the provider's cache rules
// (core/offline-model/cache.ts): one cache for the whole isolate, as for the whole account.
import { describe, expect, it } from "vitest";
import { blockPrefixTokens } from "../../core/offline-model/cache";
import type { WireRequest } from "../../core/offline-model/wire";
import type { Usage } from "../../core/types";
import { api, newTenantWithId, send, transcript } from "./helpers";

/** A prompt long enough to be cached on its own, unique to this run. */
const prompt = (words: string) => `${words} ${crypto.randomUUID()} ${"details. ".repeat(300)}`;

async function newConversation(key: string): Promise<string> {
  const r = await api("POST", "/v1/conversations", {}, { key });
  expect(r.status).toBe(201);
  return r.json.id as string;
}

async function turnUsage(conversation: string, content: string, key: string): Promise<Usage> {
  const r = await send(conversation, content, key);
  expect(r.status, r.text).toBe(200);
  return r.json.usage as Usage;
}

async function replayOf(conversation: string, key: string) {
  const r = await api("GET", `/v1/conversations/${conversation}/replay`, undefined, { key });
  expect(r.status).toBe(200);
  return r.json as { model: string; system: { text: string }[]; tools: unknown[] };
}

/** Tokens of a request's tools and system prompt: the most a request may read of what it shares with no message. */
async function toolsAndSystemTokens(conversation: string, key: string): Promise<number> {
  const { model, system, tools } = await replayOf(conversation, key);
  return blockPrefixTokens({ model, system, tools, messages: [] } as unknown as WireRequest).at(-1) ?? 0;
}

describe("the prompt cache across tenants", () => {
  it("a tenant's turn reads nothing of another tenant's prompt, whether or not it sent the same text", async () => {
    const a = await newTenantWithId();
    const b = await newTenantWithId();
    const secret = prompt("Draft the press release for the Acme–Globex merger at $41.50 a share");
    const ua = await turnUsage(await newConversation(a.key), secret, a.key);
    // B's first turn writes B's own prefix; its next fresh conversations read it back.
    await turnUsage(await newConversation(b.key), prompt("Something else entirely"), b.key);
    const other = await turnUsage(await newConversation(b.key), prompt("Another thing of its own"), b.key);
    const same = await newConversation(b.key);
    const ub = await turnUsage(same, secret, b.key);

    // What B reads is the same for A's text as for any other: it learns nothing of A's turn.
    expect(ub.cache_read_input_tokens).toBe(other.cache_read_input_tokens);
    // At most its own tools and system prompt: never A's message (A wrote all of it).
    expect(ub.cache_read_input_tokens).toBeLessThanOrEqual(await toolsAndSystemTokens(same, b.key));
    expect(ub.cache_read_input_tokens).toBeLessThan(ua.cache_read_input_tokens + ua.cache_creation_input_tokens);
  });

  it("the scope line opens the system prompt, differs per tenant, is stable within one, and names no id", async () => {
    const a = await newTenantWithId();
    const b = await newTenantWithId();
    const [a1, a2, b1] = [await newConversation(a.key), await newConversation(a.key), await newConversation(b.key)];
    const sysA1 = (await replayOf(a1, a.key)).system[0].text;
    const sysA2 = (await replayOf(a2, a.key)).system[0].text;
    const sysB1 = (await replayOf(b1, b.key)).system[0].text;
    const firstLine = (text: string) => text.split("\n")[0];

    expect(firstLine(sysA1)).toMatch(/^<cache_scope>[0-9a-f]{32}<\/cache_scope>$/);
    expect(firstLine(sysB1)).not.toBe(firstLine(sysA1));
    // A tenant's conversations share their whole prefix (one cache write for the contract per tenant).
    expect(sysA2).toBe(sysA1);
    // A turn's requests keep it: the prompt after a turn is the prompt before it.
    await send(a1, "hello", a.key);
    expect((await replayOf(a1, a.key)).system[0].text).toBe(sysA1);
    expect(sysA1).not.toContain(a.tenantId);
    expect(sysB1).not.toContain(b.tenantId);
  });

  it("a sub-agent's request reads nothing of another tenant's delegated task", async () => {
    const a = await newTenantWithId();
    const b = await newTenantWithId();
    const delegate = (name: string, task: string) => `@tool agent_delegate ${JSON.stringify({ name, task })}`;
    const workspace = async (key: string) => {
      const id = await newConversation(key);
      await send(id, `@tool tool_activate {"name":"agent_delegate"}`, key);
      return id;
    };
    /** The usage of the first model call of the sub-agent named `name`. */
    const firstCall = async (conversation: string, name: string, key: string) => {
      const step = (await transcript(conversation, key)).find(
        (m) => m.agent?.name === name && m.role === "assistant" && m.usage,
      );
      expect(step, name).toBeDefined();
      return step!.usage!;
    };
    const task = prompt("Work out the Acme–Globex exchange ratio at $41.50 a share");

    const inA = await workspace(a.key);
    await send(inA, delegate("secret", task), a.key);
    const ua = await firstCall(inA, "secret", a.key);

    // B's first delegation writes B's own sub-agent prefix; the next ones read it back.
    const inB = await workspace(b.key);
    await send(inB, delegate("first", prompt("Count the rows of nothing in particular")), b.key);
    await send(inB, delegate("other", prompt("Sum the columns of something else")), b.key);
    await send(inB, delegate("same", task), b.key);
    const other = await firstCall(inB, "other", b.key);
    const ub = await firstCall(inB, "same", b.key);

    expect(ub.cache_read_input_tokens).toBe(other.cache_read_input_tokens);
    expect(ub.cache_read_input_tokens).toBeLessThan(ua.cache_read_input_tokens + ua.cache_creation_input_tokens);
  });
});
