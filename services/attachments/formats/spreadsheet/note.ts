// One note for both spreadsheet formats: XLSX states its sheets, CSV/TSV its columns and rows.
import { count, type AttachmentFormat } from "../format";

export const SPREADSHEET_TOOLS = ["spreadsheet_read"] as const;

export const spreadsheetNote: AttachmentFormat["note"] = (f, { arg }) => {
  const facts: string[] = [];
  if (f.sheets?.length)
    facts.push(`sheets: ${f.sheets.map((s) => `${s.name} (${count(s.rows)} rows x ${s.columns} columns)`).join(", ")}`);
  if (f.columns?.length)
    facts.push(
      `${count(f.rows ?? 0)} rows; columns: ${f.columns.slice(0, 12).join(", ")}${f.columns.length > 12 ? ", …" : ""}`,
    );
  return {
    facts,
    how: `Read rows with spreadsheet_read {${arg},"rows":"1-50"}${f.sheets?.length ? ` (add "sheet")` : ""}.`,
  };
};
