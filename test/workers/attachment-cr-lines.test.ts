// Files whose lines end in a lone CR (Excel for Mac's "CSV (Macintosh)", classic Mac OS text):
// the upload note, spreadsheet_read and file_read count and read their lines as lines.
import { describe, expect, it } from "vitest";
import { createConversation, newTenantWithId, send } from "./helpers";
import { toolText, upload } from "./attachment-helpers";

describe("CR line endings", () => {
  it("a CR-only CSV: its columns and rows in the note, spreadsheet_read and file_read by row", async () => {
    const { key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    const rows = Array.from({ length: 30 }, (_, i) => `employee${i},${50_000 + i * 1000}`);
    const up = await upload(id, "salaries.csv", `name,salary\r${rows.join("\r")}\r`, "text/csv", key);
    expect(up.status).toBe(201);
    expect(up.json.facts).toMatchObject({ kind: "spreadsheet", columns: ["name", "salary"], rows: 30, lines: 31 });
    const read = toolText(
      await send(id, `@tool spreadsheet_read {"attachment_id":"${up.json.id}","rows":"1-30"}`, key),
    );
    expect(read).toContain("[spreadsheet_read: salaries.csv, rows 1-30]\nname\tsalary\nemployee0\t50000\n");
    expect(read).toContain("employee29\t79000");
    const txt = await upload(id, "mac.txt", "first line\rsecond line\r\rfourth line", "text/plain", key);
    expect(txt.json.facts).toMatchObject({ kind: "text", lines: 4 });
    const lines = toolText(await send(id, `@tool file_read {"attachment_id":"${txt.json.id}","lines":"2-4"}`, key));
    expect(lines).toBe("[file_read: mac.txt, lines 2-4 of 4]\nsecond line\n\nfourth line");
    const csvLines = toolText(await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"30-31"}`, key));
    expect(csvLines).toBe("[file_read: salaries.csv, lines 30-31 of 31]\nemployee28,78000\nemployee29,79000");
  });
});
