// The view an export is bounded by ends before a regenerate's copy only while that copy's mark is
// being saved (a turn runs and the copy is the last message). A copy whose mark failed stays
// unmarked; a later turn's messages after it must never hide it, nor themselves, from the view.
import { describe, expect, it } from "vitest";
import { markedView } from "../../durable-objects/conversation/regenerate";

const copy = { copySeq: 3, fromSeq: 1, toSeq: 2 };

describe("markedView", () => {
  it("ends before the copy while its regenerate saves the mark", () => {
    const view = markedView({ lastSeq: 3, messageCount: 3 }, { unmarkedCopy: copy, turnsInFlight: 1 });
    expect(view).toEqual({ lastSeq: 2, messageCount: 2 });
  });

  it("is the record as it stands once a later turn saved a message after a copy whose mark failed", () => {
    const view = markedView({ lastSeq: 4, messageCount: 4 }, { unmarkedCopy: copy, turnsInFlight: 1 });
    expect(view).toEqual({ lastSeq: 4, messageCount: 4 });
  });

  it("is the record as it stands when no turn runs", () => {
    const view = markedView({ lastSeq: 3, messageCount: 3 }, { unmarkedCopy: copy, turnsInFlight: 0 });
    expect(view).toEqual({ lastSeq: 3, messageCount: 3 });
  });
});
