// file_read reads text and CSV/TSV, never an XLSX's ZIP bytes.
import { zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { createConversation, send } from "./helpers";
import { toolText, upload } from "./attachment-helpers";

const xml = (s: string) => new TextEncoder().encode(`<?xml version="1.0" encoding="UTF-8"?>${s}`);
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const NS = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${REL}"`;

describe("file_read on spreadsheets", () => {
  it("refuses an XLSX, pointing to spreadsheet_read, and still reads a CSV", async () => {
    const xlsx = zipSync({
      "xl/workbook.xml": xml(
        `<workbook ${NS}><sheets><sheet name="Budget" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      ),
      "xl/_rels/workbook.xml.rels": xml(
        `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
      ),
      "xl/worksheets/sheet1.xml": xml(
        `<worksheet ${NS}><dimension ref="A1:A1"/><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Secret</t></is></c></row></sheetData></worksheet>`,
      ),
    });
    const id = await createConversation();
    const up = await upload(id, "b.xlsx", xlsx, "application/octet-stream");
    expect(up.json.facts.kind).toBe("spreadsheet");
    const csv = await upload(id, "t.csv", "a,b\n1,2\n", "text/csv");
    await upload(id, "n.txt", "hello\n", "text/plain"); // activates file_read
    const r = await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"1-3"}`);
    expect(r.json.messages[2].content[0].is_error).toBe(true);
    expect(toolText(r)).toContain("spreadsheet_read");
    expect(toolText(r)).not.toContain("PK");
    const ok = await send(id, `@tool file_read {"attachment_id":"${csv.json.id}","lines":"1-2"}`);
    expect(toolText(ok)).toContain("a,b\n1,2");
  });
});
