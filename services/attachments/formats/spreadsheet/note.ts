// One note for both spreadsheet formats: XLSX states its sheets, CSV/TSV its columns and rows.
// Sheet and column names are the file's own words inside the note the model takes as the
// platform's (a project's file rides every prompt of the project): each escaped and cut, the list
// cut too, so a header can neither close the block nor fill the prompt.
import { type AttachmentFormat, count, counted, noteText } from "../format";

// Declared here, beside the only code that reads it: a fact of XLSX workbooks alone.
declare module "../format" {
  interface FormatFacts {
    /** The sheets of a workbook after the ones `sheets` lists (it lists at most 100). */
    sheetsLeftOut?: number;
  }
}

export const SPREADSHEET_TOOLS = ["spreadsheet_read"] as const;

/** At most this many names are listed, each at most NAME_MAX chars, the list at most LIST_MAX. */
const LISTED = 12;
const NAME_MAX = 60;
const LIST_MAX = 300;

/** The first names that fit, then how many were left out ("and 8 more"), `unlisted` more with them. */
function nameList(items: string[], unlisted = 0): string {
  const shown: string[] = [];
  let length = 0;
  for (const item of items.slice(0, LISTED)) {
    if (shown.length && length + 2 + item.length > LIST_MAX) break;
    shown.push(item);
    length += (shown.length > 1 ? 2 : 0) + item.length;
  }
  const left = items.length - shown.length + unlisted;
  return left ? `${shown.join(", ")}, and ${count(left)} more` : shown.join(", ");
}

export const spreadsheetNote: AttachmentFormat["note"] = (f, { arg }) => {
  const facts: string[] = [];
  if (f.sheets?.length)
    facts.push(
      `sheets: ${nameList(
        f.sheets.map(
          (s) => `${noteText(s.name, NAME_MAX)} (${counted(s.rows, "row")} x ${counted(s.columns, "column")})`,
        ),
        f.sheetsLeftOut,
      )}`,
    );
  if (f.columns?.length)
    facts.push(`${counted(f.rows ?? 0, "row")}; columns: ${nameList(f.columns.map((c) => noteText(c, NAME_MAX)))}`);
  return {
    facts,
    how: `Read rows with spreadsheet_read {${arg},"rows":"1-50"}${f.sheets?.length ? ` (add "sheet")` : ""}.`,
  };
};
