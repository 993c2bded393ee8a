// A project with more files than its prompt lists says how the model finds the rest: the call it
// names must be one memory_search accepts (its input is strict: no `kind`).
import { describe, expect, it } from "vitest";
import { memorySearch } from "../../agent/tools/memory-search";
import type { Attachment } from "../../services/attachments/store";
import { type Project, projectFilesBlock } from "../../services/projects";

const project: Project = {
  id: "prj_1",
  tenantId: "ten_1",
  name: "Reports",
  createdAt: "2025-01-01T00:00:00.000Z",
  updatedAt: "2025-01-01T00:00:00.000Z",
  settings: "{}",
};
const file: Attachment = {
  id: "att_1",
  conversationId: "",
  name: "q1.pdf",
  type: "application/pdf",
  size: 1000,
  status: "ready",
  facts: { kind: "pdf", pageCount: 3 },
  createdAt: "2025-01-01T00:00:00.000Z",
};

describe("a project block listing only some of its files", () => {
  it("names a memory_search call whose input memory_search accepts", () => {
    const block = projectFilesBlock(project, [file], true);
    const call = /memory_search (\{[^\n]*?\})/.exec(block);
    expect(call, block).not.toBeNull();
    expect(memorySearch.input.safeParse(JSON.parse(call![1])).success).toBe(true);
    expect(block).not.toMatch(/kind page/);
  });
});
