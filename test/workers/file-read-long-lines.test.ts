// file_read past the 32 MiB scan cap: a read-on deep inside one long line, the line after it, and
// an offset past a line's end.
import { describe, expect, it } from "vitest";
import { createConversation, send } from "./helpers";
import { toolText, upload } from "./attachment-helpers";

describe("file_read on lines longer than the scan cap", () => {
  it("reads on 34 MiB into one line and reaches the line after it", async () => {
    const id = await createConversation();
    const size = 34 * 1024 * 1024;
    const body = new Uint8Array(size + 13).fill(0x61);
    body.set(new TextEncoder().encode("TAIL-MARKER"), size - 11);
    body.set(new TextEncoder().encode("\nLINE-TWO-OK\n"), size);
    const up = await upload(id, "dump.txt", body, "text/plain");
    expect(up.status).toBe(201);
    const tail = toolText(
      await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"1","offset":${size - 100}}`),
    );
    expect(tail).toContain("TAIL-MARKER");
    expect(tail).not.toContain("read on with");
    const two = toolText(await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"2"}`));
    expect(two).toContain("\nLINE-TWO-OK");
  });

  it("an offset past the line's end is an error", async () => {
    const id = await createConversation();
    const up = await upload(id, "o.txt", "abc\ndef\n", "text/plain");
    const r = await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"1-2","offset":50}`);
    expect(r.json.messages[2].content[0].is_error).toBe(true);
    expect(toolText(r)).toMatch(/offset/);
  });
});
