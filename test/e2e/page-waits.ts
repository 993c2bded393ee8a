// What the browser tests share on the chat page: its waits, and a conversation paused on a client tool.
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { api } from "./client";

/** Waits until no turn streams on the page and at least `n` finished turns are on it. */
export async function turnsSettled(page: Page, n: number): Promise<void> {
  await page.waitForFunction(
    (n) =>
      !document.querySelector(".turn.live") &&
      document.querySelectorAll(".turn.done").length >= n &&
      !!document.querySelector("#send:not([hidden])"),
    n,
    { timeout: 60_000 },
  );
}

/** A conversation whose turn paused on the client tool ask_person: its id and the paused turn's answer. */
export async function pausedConversation(title: string) {
  const id = (await api("POST", "/v1/conversations", { title })).json.id;
  const tools = [
    { name: "ask_person", description: "Ask the person", input_schema: { type: "object", properties: {} } },
  ];
  const paused = (await api("POST", `/v1/conversations/${id}/messages`, { content: "@tool ask_person {}", tools }))
    .json;
  expect(paused.stop_reason).toBe("requires_action");
  return { id, paused };
}
