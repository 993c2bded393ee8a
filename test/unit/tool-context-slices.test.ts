// Each built-in tool names the slices of ToolContext it uses (agent/tools/registry.ts), and runs
// on those alone. The type assertions are checked by `npm run check` (tsc over test/); the runs
// below hand each tool an object holding only its slices.
import { describe, expect, expectTypeOf, it } from "vitest";
import { agentDelegate } from "../../agent/tools/agent-delegate";
import {
  documentRead,
  fileRead,
  imageView,
  pdfInfo,
  pdfRead,
  spreadsheetRead,
} from "../../agent/tools/attachment-tools";
import { conversationList } from "../../agent/tools/conversation-list";
import type { conversationRead } from "../../agent/tools/conversation-read";
import { memoryForget, type memoryUpdate } from "../../agent/tools/memory-edit";
import type { memoryGet } from "../../agent/tools/memory-get";
import { memorySave } from "../../agent/tools/memory-save";
import type { memorySearch } from "../../agent/tools/memory-search";
import type { pdfSearch } from "../../agent/tools/pdf-search";
import type { httpToolDefinition } from "../../agent/tools/registered-tools";
import type {
  AttachmentAccess,
  CallScope,
  CortexAccess,
  DelegateAccess,
  MemoryAccess,
  ToolAccess,
  ToolContext,
  ToolDefinition,
  TranscriptAccess,
} from "../../agent/tools/registry";
import type { toolActivate, toolSearch } from "../../agent/tools/tool-discovery";

type SliceOf<T> = T extends ToolDefinition<infer _I, infer C> ? C : never;

describe("tool context slices", () => {
  it("every built-in tool declares only the slices it uses", () => {
    expectTypeOf<SliceOf<typeof memorySave>>().toEqualTypeOf<MemoryAccess>();
    expectTypeOf<SliceOf<typeof memoryUpdate>>().toEqualTypeOf<MemoryAccess>();
    expectTypeOf<SliceOf<typeof memoryForget>>().toEqualTypeOf<MemoryAccess>();
    expectTypeOf<SliceOf<typeof memoryGet>>().toEqualTypeOf<CallScope & MemoryAccess & TranscriptAccess>();
    expectTypeOf<SliceOf<typeof memorySearch>>().toEqualTypeOf<CallScope & CortexAccess & ToolAccess>();
    expectTypeOf<SliceOf<typeof conversationRead>>().toEqualTypeOf<CallScope & TranscriptAccess>();
    expectTypeOf<SliceOf<typeof conversationList>>().toEqualTypeOf<CallScope & TranscriptAccess>();
    for (const t of [fileRead, pdfInfo, pdfRead, imageView, spreadsheetRead, documentRead])
      expectTypeOf<SliceOf<typeof t>>().toEqualTypeOf<AttachmentAccess>();
    expectTypeOf<SliceOf<typeof pdfSearch>>().toEqualTypeOf<CallScope & AttachmentAccess & CortexAccess>();
    expectTypeOf<SliceOf<ReturnType<typeof toolSearch>>>().toEqualTypeOf<ToolAccess>();
    expectTypeOf<SliceOf<ReturnType<typeof toolActivate>>>().toEqualTypeOf<ToolAccess>();
    expectTypeOf<SliceOf<typeof agentDelegate>>().toEqualTypeOf<DelegateAccess>();
    expectTypeOf<SliceOf<ReturnType<typeof httpToolDefinition>>>().toEqualTypeOf<CallScope>();
    // The context the registry hands a call holds every slice.
    expectTypeOf<ToolContext>().toExtend<
      CallScope & TranscriptAccess & CortexAccess & AttachmentAccess & MemoryAccess & ToolAccess & DelegateAccess
    >();
  });

  it("a tool runs on its slices alone", async () => {
    const memory: MemoryAccess = {
      memory: {
        getNote: async () => null,
        getEpisode: async () => null,
        conversationOfMessage: async () => null,
        saveNote: async (input) =>
          ({ id: "mem_1", title: input.title ?? "untitled", text: input.text, tags: [] }) as never,
        updateNote: async () => null,
        deleteNote: async (id) => id === "mem_01M8XB306NZEEYSE16JBKV2N5X",
      },
    };
    expect((await memorySave.run({ text: "keep this", title: "kept" }, memory)).content).toBe("saved note mem_1: kept");
    expect((await memoryForget.run({ id: "mem_01M8XB306NZEEYSE16JBKV2N5X" }, memory)).content).toBe(
      "deleted note mem_01M8XB306NZEEYSE16JBKV2N5X",
    );

    const listing: CallScope & TranscriptAccess = {
      tenantId: "t",
      conversationId: "conv_here",
      progress: () => {},
      readConversation: async () => null,
      listConversations: async () => [
        {
          id: "conv_here",
          title: "this",
          createdAt: "2026-01-02T00:00:00Z",
          updatedAt: "2026-01-03T00:00:00Z",
          messageCount: 4,
        },
      ],
    };
    expect((await conversationList.run({}, listing)).content).toContain(
      'conv_here "this" created 2026-01-02, updated 2026-01-03, 4 messages (this one)',
    );

    const delegated: string[] = [];
    expect((await agentDelegate.run({ task: "t", name: "n" }, {})).isError).toBe(true);
    expect(
      (
        await agentDelegate.run(
          { task: "sum", name: "helper" },
          { delegate: async (task, name) => (delegated.push(`${name}:${task}`), { content: "done" }) },
        )
      ).content,
    ).toBe("done");
    expect(delegated).toEqual(["helper:sum"]);
  });
});
