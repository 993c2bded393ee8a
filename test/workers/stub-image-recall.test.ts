// A stale image result's stub names the call that returns the original: conversation_read of its
// message and block brings the stored image back as an image (running a client's screenshot tool
// again would show the screen now, not then).
import { expect, it } from "vitest";
import type { WireMessage } from "../../core/types";
import { b64, pngHead } from "../unit/image-bytes";
import { blocksOf, resultText, toolResults } from "../blocks";
import { api, createConversation, send, turnMessages } from "./helpers";

const shot = {
  name: "take_screenshot",
  description: "A screenshot of the client's screen now",
  input_schema: { type: "object", properties: {} },
};

it("a stale client-tool image result: the stub's named call brings the original image back", async () => {
  const id = await createConversation({ stubBatchChars: 0 });
  const paused = await api("POST", `/v1/conversations/${id}/messages`, {
    content: "@tool take_screenshot {}",
    tools: [shot],
  });
  const [call] = paused.json.requires_action!.calls;
  const data = b64(pngHead(64, 64, 3000));
  const posted = await api("POST", `/v1/conversations/${id}/tool-results`, {
    results: [
      {
        tool_use_id: call.id,
        content: [
          { type: "text", text: "screen at 10:00" },
          { type: "image", source: { type: "base64", media_type: "image/png", data } },
        ],
      },
    ],
  });
  expect(posted.status, posted.text.slice(0, 300)).toBe(200);
  for (let i = 0; i < 4; i++) expect((await send(id, `later question ${i}`)).status).toBe(200);
  const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
  const stub = toolResults(replay.messages as WireMessage[]).find((b) => b.tool_use_id === call.id)!;
  const text = resultText(stub);
  expect(text).toMatch(/^\[stale tool result replaced by this stub: take_screenshot \{\} returned an image/);
  expect(text).not.toContain("same call again");
  expect(text).toContain("returns its text and the image.]");
  const named = /conversation_read (\{[^}]*\})/.exec(text)![1];
  const r = await send(id, `@tool conversation_read ${named}`);
  expect(r.status, r.text.slice(0, 300)).toBe(200);
  const result = toolResults(turnMessages(r)).at(-1)!;
  expect(result.is_error).toBeUndefined();
  expect(resultText(result)).toContain("screen at 10:00");
  expect(resultText(result)).toContain("its image follows this page");
  const images = blocksOf(typeof result.content === "string" ? [] : result.content, "image");
  expect(images).toEqual([{ type: "image", source: { type: "base64", media_type: "image/png", data } }]);
}, 60_000);

it("conversation_read of a user message's image block returns the image, with the first page only", async () => {
  const id = await createConversation();
  const data = b64(pngHead(32, 32, 1000));
  const sent = await send(id, [
    { type: "text", text: "what is on this picture?" },
    { type: "image", source: { type: "base64", media_type: "image/png", data } },
  ]);
  expect(sent.status, sent.text.slice(0, 300)).toBe(200);
  const prompt = turnMessages(sent)[0];
  expect(prompt.content[1].type).toBe("image");
  const read = async (args: Record<string, unknown>) => {
    const r = await send(id, `@tool conversation_read ${JSON.stringify({ message_id: prompt.id, block: 1, ...args })}`);
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    return toolResults(turnMessages(r)).at(-1)!;
  };
  const first = await read({});
  expect(resultText(first)).toContain("its image follows this page");
  expect(blocksOf(typeof first.content === "string" ? [] : first.content, "image")).toEqual([
    { type: "image", source: { type: "base64", media_type: "image/png", data } },
  ]);
  const later = await read({ offset: 5 });
  expect(resultText(later)).toContain("its image comes with the first page (offset 0)");
  expect(blocksOf(typeof later.content === "string" ? [] : later.content, "image")).toEqual([]);
}, 60_000);
