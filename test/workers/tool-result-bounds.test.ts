// Every tool result that reads a stored thing is bounded, and a read cut short says where it stopped
// and names the call that reads on: spreadsheet_read (XLSX and CSV, long and wide rows) and
// memory_search / pdf_search snippets, through the real turn path with the offline model.
import { describe, expect, it } from "vitest";
import { memoryRangeReader } from "../../services/attachments/formats/shared/range-reader";
import { readXlsxRows } from "../../services/attachments/formats/spreadsheet/xlsx";
import { cutSnippet } from "../../agent/tools/memory-search";
import { createConversation, newTenant, send } from "./helpers";
import { toolText, upload } from "./attachment-helpers";

const CAP = 60_000;
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const NS = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${REL}"`;
const xml = (s: string) => new TextEncoder().encode(`<?xml version="1.0" encoding="UTF-8"?>${s}`);

/** An XLSX of one sheet "Data" with the given shared strings and <row> elements. */
async function xlsx({ strings, rows }: { strings: string[]; rows: string[] }): Promise<Uint8Array> {
  const { zipSync } = await import("fflate");
  return zipSync({
    "xl/workbook.xml": xml(`<workbook ${NS}><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>`),
    "xl/_rels/workbook.xml.rels": xml(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ),
    "xl/sharedStrings.xml": xml(`<sst ${NS}>${strings.map((s) => `<si><t>${s}</t></si>`).join("")}</sst>`),
    "xl/worksheets/sheet1.xml": xml(`<worksheet ${NS}><sheetData>${rows.join("")}</sheetData></worksheet>`),
  });
}

/** The `spreadsheet_read {...}` a result names to read on, parsed. */
const readOnOf = (out: string) => {
  const m = /read on with spreadsheet_read (\{[^}]*\})/.exec(out);
  return m ? (JSON.parse(m[1]) as { attachment_id: string; rows: string }) : null;
};
const bodyOf = (out: string) => out.slice(out.indexOf("\n") + 1).replace(/\n\n\[spreadsheet_read: [^\n]*\]$/, "");

describe("spreadsheet_read bounds", { timeout: 120_000 }, () => {
  it("caps an XLSX read at whole rows and names the call that reads on", async () => {
    const id = await createConversation();
    const long = "w".repeat(20_000);
    const rows = Array.from(
      { length: 8 },
      (_, i) => `<row r="${i + 1}"><c r="A${i + 1}" t="s"><v>0</v></c><c r="B${i + 1}"><v>${i + 1}</v></c></row>`,
    );
    const up = await upload(id, "long.xlsx", await xlsx({ strings: [long], rows }), "application/octet-stream");
    expect(up.status).toBe(201);
    const out = toolText(await send(id, `@tool spreadsheet_read {"attachment_id":"${up.json.id}","rows":"1-8"}`));
    expect(out.length).toBeLessThan(CAP + 500);
    expect(bodyOf(out) === `${long}\t1\n${long}\t2`).toBe(true);
    expect(out).toContain("rows 1-2]");
    expect(out).toContain(
      `stopped at the 60,000-char cap after row 2; read on with spreadsheet_read {"attachment_id":"${up.json.id}","rows":"3-8"}`,
    );
    // Walking the read-on calls shows every row exactly once.
    let next = readOnOf(out);
    const seen = [1, 2];
    for (let i = 0; next && i < 8; i++) {
      const page = toolText(await send(id, `@tool spreadsheet_read ${JSON.stringify(next)}`));
      expect(page.length).toBeLessThan(CAP + 500);
      for (const line of bodyOf(page).split("\n")) seen.push(Number(line.split("\t")[1]));
      next = readOnOf(page);
    }
    expect(seen).toEqual(Array.from({ length: 8 }, (_, i) => i + 1));
  });

  it("cuts a single XLSX row over the cap at a whole character and says so", async () => {
    const id = await createConversation();
    const long = `${"x".repeat(CAP - 1)}😀${"y".repeat(10_000)}`;
    const rows = [`<row r="1"><c r="A1" t="s"><v>0</v></c></row>`, `<row r="2"><c r="A2"><v>7</v></c></row>`];
    const up = await upload(id, "one.xlsx", await xlsx({ strings: [long], rows }), "application/octet-stream");
    const out = toolText(await send(id, `@tool spreadsheet_read {"attachment_id":"${up.json.id}","rows":"1-2"}`));
    expect(out.length).toBeLessThan(CAP + 500);
    expect(out.isWellFormed()).toBe(true);
    // The cap falls inside the pair: the cut moves back before it.
    expect(bodyOf(out) === "x".repeat(CAP - 1)).toBe(true);
    expect(out).toContain("row 1 is longer than the 60,000-char cap and is cut there");
    expect(readOnOf(out)).toEqual({ attachment_id: up.json.id, rows: "2-2" });
  });

  it("holds the cap on rows padded to column XFD, without building every padded row", async () => {
    const wide = (col: string, n: number) =>
      Array.from({ length: n }, (_, i) => `<row r="${i + 1}"><c r="${col}${i + 1}"><v>${i + 1}</v></c></row>`);
    // 16,384 columns a row: three rows fit the cap, and only those are built.
    const xfd = await xlsx({ strings: [], rows: wide("XFD", 500) });
    const direct = await readXlsxRows(memoryRangeReader(xfd), { sheet: 1, from: 1, to: 500, maxChars: CAP });
    expect(direct).toMatchObject({ from: 1, to: 3, truncated: true });
    expect(direct.rows.length).toBe(3);
    expect(direct.rows[2].length).toBe(16_384);
    // Through a turn (702 columns a row: a run of 16,383 tabs is slow for the token counter).
    const id = await createConversation();
    const up = await upload(
      id,
      "wide.xlsx",
      await xlsx({ strings: [], rows: wide("ZZ", 150) }),
      "application/octet-stream",
    );
    const out = toolText(await send(id, `@tool spreadsheet_read {"attachment_id":"${up.json.id}","rows":"1-150"}`));
    expect(out.length).toBeLessThan(CAP + 500);
    const lines = bodyOf(out).split("\n");
    expect(lines.map((l) => l.replace(/\t/g, ""))).toEqual(lines.map((_, i) => String(i + 1)));
    expect(readOnOf(out)).toEqual({ attachment_id: up.json.id, rows: `${lines.length + 1}-150` });
  });

  it("caps a CSV read at whole rows, and a cell cut inside names the file_read that shows the rest", async () => {
    const id = await createConversation();
    const cell = "c".repeat(300_000);
    const csv = `id,text\n1,${cell}\n2,after\n`;
    const up = await upload(id, "big.csv", csv, "text/csv");
    expect(up.status).toBe(201);
    const out = toolText(await send(id, `@tool spreadsheet_read {"attachment_id":"${up.json.id}","rows":"1-2"}`));
    expect(out.length).toBeLessThan(CAP + 500);
    expect(out).toContain("row 1 is longer than the 60,000-char cap and is cut there");
    const rest = /the rest of it: tool_activate \{"name":"file_read"\}, then file_read (\{[^}]*\})/.exec(out);
    expect(rest).not.toBeNull();
    const shown = bodyOf(out).split("\n")[1].split("\t")[1];
    expect(shown.length).toBeGreaterThan(CAP - 100);
    await send(id, `@tool tool_activate {"name":"file_read"}`);
    const more = toolText(await send(id, `@tool file_read ${rest![1]}`));
    const restText = more.slice(more.indexOf("\n") + 1);
    expect(shown + restText === cell).toBe(true);
    expect(readOnOf(out)).toEqual({ attachment_id: up.json.id, rows: "2-2" });
    const after = toolText(await send(id, `@tool spreadsheet_read ${JSON.stringify(readOnOf(out))}`));
    expect(bodyOf(after)).toBe("id\ttext\n2\tafter");
  });

  it("stops a CSV read at a row boundary under the cap and names the read-on call", async () => {
    const id = await createConversation();
    const rowText = (i: number) => `${i},${"d".repeat(9_000)}`;
    const csv = `id,text\n${Array.from({ length: 12 }, (_, i) => rowText(i + 1)).join("\n")}\n`;
    const up = await upload(id, "rows.csv", csv, "text/csv");
    const out = toolText(await send(id, `@tool spreadsheet_read {"attachment_id":"${up.json.id}","rows":"1-12"}`));
    expect(out.length).toBeLessThan(CAP + 500);
    const lines = bodyOf(out).split("\n");
    expect(lines.slice(1).every((l, i) => l === rowText(i + 1).replace(",", "\t"))).toBe(true);
    expect(lines.length - 1).toBe(6);
    expect(readOnOf(out)).toEqual({ attachment_id: up.json.id, rows: "7-12" });
  });
});

describe("snippet bounds", { timeout: 120_000 }, () => {
  it("cuts each memory_search snippet around its match, whatever the length of a token", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    for (let i = 0; i < 6; i++) await send(id, `quokka ${String.fromCharCode(97 + i).repeat(18_000)} note ${i}`, key);
    const out = toolText(await send(id, `@tool memory_search {"query":"quokka","limit":6}`, key));
    expect(out).toContain("6 matches");
    expect(out.length).toBeLessThan(6 * 600);
    expect(out).toContain("[quokka]");
  });

  it("cutSnippet keeps the match, marks the cuts and never splits a pair", () => {
    const s = `${"a ".repeat(500)}[match] ${"😀".repeat(400)}`;
    const cut = cutSnippet(s, 300);
    expect(cut).toContain("[match]");
    expect(cut.startsWith("…")).toBe(true);
    expect(cut.endsWith("…")).toBe(true);
    expect(cut.length).toBeLessThanOrEqual(302);
    expect(cut.isWellFormed()).toBe(true);
    const long = cutSnippet(`before [${"m".repeat(1000)}] after`, 300);
    expect(long.endsWith("…]")).toBe(true);
    expect(long.length).toBeLessThanOrEqual(303);
    expect(cutSnippet("short [hit] text")).toBe("short [hit] text");
  });
});
