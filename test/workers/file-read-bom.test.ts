// file_read keeps U+FEFF wherever it is but at the very start of the file (a read-on piece that
// starts with one: test/unit/line-index-scan.test.ts).
import { describe, expect, it } from "vitest";
import { createConversation, send } from "./helpers";
import { toolText, upload } from "./attachment-helpers";

describe("file_read and U+FEFF", () => {
  it("drops the file's byte-order mark but keeps a U+FEFF that starts line 2", async () => {
    const id = await createConversation();
    const up = await upload(id, "z.txt", "\uFEFFfirst\n\uFEFFsecond\n", "text/plain");
    const t = toolText(await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"1-2"}`));
    expect(t).toContain("]\nfirst\n\uFEFFsecond");
  });
});
