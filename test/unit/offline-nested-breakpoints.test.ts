// Offline model: the blocks nested in a search_result's content and in a document whose source is a
// content list (at the top level or inside a tool_result) are held to the rules of every other block,
// as the real API holds them: their cache_control breakpoints count towards the 4 and keep the ttl
// order, they take no unknown field, their text is not empty and an empty one takes no breakpoint.
// The pinned SDK: SearchResultBlockParam.content is Array<TextBlockParam>, ContentBlockSourceContent
// is TextBlockParam | ImageBlockParam, and TextBlockParam.cache_control "Create[s] a cache control
// breakpoint at this content block".
import { beforeEach, describe, expect, it } from "vitest";
import { handleMessagesRequest, resetOfflineCache } from "../../core/offline-model";

beforeEach(() => resetOfflineCache());

const DEC_3 = Date.UTC(2026, 11, 3, 12);
const EPHEMERAL = { type: "ephemeral" };
const MAX_FOUND_5 = "A maximum of 4 blocks with cache_control may be provided. Found 5.";
const TTL_ORDER =
  "cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.";

type Block = Record<string, unknown>;
interface Answer {
  status: number;
  type?: string;
  message?: string;
  usage?: { cache_read_input_tokens: number; cache_creation_input_tokens: number };
}

async function post(body: Record<string, unknown>): Promise<Answer> {
  const response = await handleMessagesRequest(
    new Request("https://offline-model.invalid/v1/messages", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-sonnet-5-5", max_tokens: 1024, ...body }),
    }),
    { now: () => DEC_3 },
  );
  const json = (await response.json()) as {
    error?: { type: string; message: string };
    usage?: Answer["usage"];
  };
  return { status: response.status, type: json.error?.type, message: json.error?.message, usage: json.usage };
}

const fourSystemBreakpoints = Array.from({ length: 4 }, (_, n) => ({
  type: "text",
  text: `Part ${n}.`,
  cache_control: EPHEMERAL,
}));

const searchResult = (content: Block[]): Block => ({
  type: "search_result",
  source: "https://example.com/h",
  title: "H",
  content,
});
const contentDocument = (content: Block[]): Block => ({ type: "document", source: { type: "content", content } });

/** A user turn with `block` first, then a question. */
const topLevel = (block: Block) => [{ role: "user", content: [block, { type: "text", text: "When?" }] }];

/** A tool call whose result holds `block`, then the result. */
const inToolResult = (block: Block) => [
  { role: "user", content: "Look it up." },
  { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: {} }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [block] }] },
];
const TOOLS = [{ name: "lookup", description: "Look it up", input_schema: { type: "object", properties: {} } }];

const placements = {
  "at the top level": { messages: topLevel, extra: {}, path: "messages.0.content.0" },
  "inside a tool_result": {
    messages: inToolResult,
    extra: { tools: TOOLS },
    path: "messages.2.content.0.tool_result.content.0",
  },
} as const;

const containers = {
  search_result: { wrap: searchResult, inner: "search_result.content.0" },
  "content document": { wrap: contentDocument, inner: "document.source.content.content.0" },
} as const;

const marked = (ttl?: "1h") => ({
  type: "text",
  text: "Opens at six.",
  cache_control: ttl ? { type: "ephemeral", ttl } : EPHEMERAL,
});

describe("breakpoints on blocks nested in search results and content documents", () => {
  for (const [where, placement] of Object.entries(placements))
    for (const [kind, container] of Object.entries(containers)) {
      it(`counts a ${kind}'s inner breakpoint ${where} as the 5th`, async () => {
        const answer = await post({
          ...placement.extra,
          system: fourSystemBreakpoints,
          messages: placement.messages(container.wrap([marked()])),
        });
        expect(answer.status).toBe(400);
        expect(answer.type).toBe("invalid_request_error");
        expect(answer.message).toBe(MAX_FOUND_5);
      });

      it(`refuses a 1h breakpoint in a ${kind} ${where} after a 5m one`, async () => {
        const answer = await post({
          ...placement.extra,
          system: [{ type: "text", text: "Part 0.", cache_control: EPHEMERAL }],
          messages: placement.messages(container.wrap([marked("1h")])),
        });
        expect(answer.status).toBe(400);
        expect(answer.message).toBe(`${placement.path}.${container.inner}.${TTL_ORDER}`);
      });

      it(`takes up to 4 with a ${kind}'s inner breakpoint ${where}`, async () => {
        const answer = await post({
          ...placement.extra,
          system: fourSystemBreakpoints.slice(0, 3),
          messages: placement.messages(container.wrap([marked()])),
        });
        expect(answer.status).toBe(200);
      });
    }

  it("counts an image's breakpoint inside a content document too", async () => {
    const image = {
      type: "image",
      source: { type: "url", url: "https://example.com/a.png" },
      cache_control: EPHEMERAL,
    };
    const answer = await post({
      system: fourSystemBreakpoints,
      messages: topLevel(contentDocument([{ type: "text", text: "A scan." }, image])),
    });
    expect(answer.message).toBe(MAX_FOUND_5);
  });

  it("keeps a search_result's own breakpoint after its inner ones (1h inside, 5m on the result)", async () => {
    const block = { ...searchResult([marked("1h")]), cache_control: EPHEMERAL };
    expect((await post({ messages: topLevel(block) })).status).toBe(200);
    const reversed = { ...searchResult([marked()]), cache_control: { type: "ephemeral", ttl: "1h" } };
    expect((await post({ messages: topLevel(reversed) })).message).toBe(`messages.0.content.0.${TTL_ORDER}`);
  });

  it("writes and reads the cache at a breakpoint inside a search_result", async () => {
    const long = Array.from({ length: 300 }, (_, i) => `Fact ${i}: the shop opens at six.`).join("\n");
    const request = (question: string) => ({
      messages: [
        {
          role: "user",
          content: [
            searchResult([{ type: "text", text: long, cache_control: EPHEMERAL }]),
            { type: "text", text: question },
          ],
        },
      ],
    });
    const first = await post(request("When?"));
    expect(first.status).toBe(200);
    expect(first.usage?.cache_creation_input_tokens).toBeGreaterThan(512);
    const second = await post(request("And on Sundays?"));
    expect(second.usage?.cache_read_input_tokens).toBe(first.usage?.cache_creation_input_tokens);
  });
});

describe("the blocks of a content document", () => {
  const path = "messages.0.content.0.document.source.content.content";

  it("refuses an empty or whitespace-only text block, at the top level and inside a tool_result", async () => {
    expect((await post({ messages: topLevel(contentDocument([{ type: "text", text: "" }])) })).message).toBe(
      "messages: text content blocks must be non-empty",
    );
    expect(
      (await post({ tools: TOOLS, messages: inToolResult(contentDocument([{ type: "text", text: " \n" }])) })).message,
    ).toBe("messages: text content blocks must contain non-whitespace text");
  });

  it("refuses a breakpoint on an empty text block (in a content document and in a search_result)", async () => {
    const empty = { type: "text", text: "", cache_control: EPHEMERAL };
    expect((await post({ messages: topLevel(contentDocument([empty])) })).message).toBe(
      `${path}.0.text: cache_control cannot be set for empty text blocks`,
    );
    expect((await post({ messages: topLevel(searchResult([empty])) })).message).toBe(
      "messages.0.content.0.search_result.content.0.text: cache_control cannot be set for empty text blocks",
    );
  });

  it("refuses an unknown field on a text or image block", async () => {
    const bold = await post({ messages: topLevel(contentDocument([{ type: "text", text: "Hi.", bold: true }])) });
    expect(bold.status).toBe(400);
    expect(bold.message).toBe(`${path}.0.text.bold: Extra inputs are not permitted`);
    const image = { type: "image", source: { type: "url", url: "https://example.com/a.png" }, alt: "A" };
    expect((await post({ messages: topLevel(contentDocument([{ type: "text", text: "A." }, image])) })).message).toBe(
      `${path}.1.image.alt: Extra inputs are not permitted`,
    );
  });

  it("refuses a missing or non-string text, and a malformed cache_control", async () => {
    expect((await post({ messages: topLevel(contentDocument([{ type: "text" }])) })).message).toBe(
      `${path}.0.text.text: Field required`,
    );
    expect((await post({ messages: topLevel(contentDocument([{ type: "text", text: 5 }])) })).message).toBe(
      `${path}.0.text.text: Input should be a valid string`,
    );
    const persistent = { type: "text", text: "Hi.", cache_control: { type: "persistent" } };
    expect((await post({ messages: topLevel(contentDocument([persistent])) })).message).toBe(
      `${path}.0.text.cache_control: Input tag 'persistent' found using 'type' does not match any of the expected tags: 'ephemeral'`,
    );
    const ttl = { type: "text", text: "Hi.", cache_control: { type: "ephemeral", ttl: "1d" } };
    expect((await post({ messages: topLevel(contentDocument([ttl])) })).message).toBe(
      `${path}.0.text.cache_control.ephemeral.ttl: Input should be '5m' or '1h'`,
    );
  });

  it("still takes well-formed text and image blocks with their optional fields", async () => {
    const answer = await post({
      messages: topLevel(
        contentDocument([
          { type: "text", text: "A scan.", citations: [] },
          { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
        ]),
      ),
    });
    expect(answer.status).toBe(200);
  });
});
