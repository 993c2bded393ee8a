// The web UI's import (workers/chat/public/js/views/transfer.js) names the new conversation after
// the file, sent as `?title=` through encodeURIComponent, which throws on half a surrogate pair:
// the title is cut between characters, and within the API's own title rule (200 UTF-16 units), so
// the import always starts and is never refused for its title. Runs in Node on a small stand-in
// for the DOM.
import { beforeAll, describe, expect, it } from "vitest";
import { visibleName } from "../../workers/chat/validate";
import { loadUiModule } from "./fake-dom";

interface Transfer {
  importTitle: (fileName: string) => string;
}

let ui: Transfer;

beforeAll(async () => {
  ui = (await loadUiModule("views/transfer.js")) as Transfer;
});

/** What the import sends: the title in the query, and whether the API takes it. */
const sent = (fileName: string) => {
  const title = ui.importTitle(fileName);
  return { title, query: `title=${encodeURIComponent(title)}`, accepted: visibleName.safeParse(title).success };
};

describe("an imported file's title in the web UI", () => {
  it("cuts a long name before an emoji its 200th unit would split", () => {
    const r = sent(`${"a".repeat(199)}😀 notes.json`);
    expect(r.title).toBe("a".repeat(199));
    expect(r.accepted).toBe(true);
  });

  it("keeps an emoji that ends on the 200th unit, and a name of emoji only to 100 of them", () => {
    expect(sent(`${"a".repeat(198)}😀 notes.json`)).toMatchObject({ title: `${"a".repeat(198)}😀`, accepted: true });
    expect(sent(`${"😀".repeat(150)}.jsonl`)).toMatchObject({ title: "😀".repeat(100), accepted: true });
  });

  it("sends a lone surrogate in the name as U+FFFD", () => {
    expect(sent("notes \ud83d.json")).toMatchObject({ title: "notes \ufffd", accepted: true });
    expect(sent("\udc00 notes.json")).toMatchObject({ title: "\ufffd notes", accepted: true });
  });

  it("leaves a short name as it was, and names a file with nothing left 'Imported conversation'", () => {
    expect(sent("Tide tables.json")).toMatchObject({ title: "Tide tables", accepted: true });
    expect(sent("\u200b.jsonl").title).toBe("Imported conversation");
  });
});
