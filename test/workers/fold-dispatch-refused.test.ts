// A refused turn never enters a fold (fold-coordinator.ts `foldable`), so it must not count toward
// the fold threshold either: otherwise a large refused turn sends fold jobs that find nothing to fold.
import { describe, expect, it } from "vitest";
import { leaseJob } from "./fold-scripted";
import { api, createConversation, send } from "./helpers";

const THRESHOLD = 4000;
const meta = async (id: string) => (await api("GET", `/v1/conversations/${id}`)).json;

/** A first turn of about 6,000 chars (`ending` decides how it ends), then short turns that push it before the kept tail. */
async function playWithBigFirstTurn(ending: string): Promise<string> {
  const id = await createConversation({ foldThresholdChars: THRESHOLD });
  expect((await send(id, `${"quarantined payload ".repeat(300)}\n${ending}`)).status).toBe(200);
  for (let i = 0; i < 5; i++) expect((await send(id, `short turn ${i}\n@reply-chars 40`)).status).toBe(200);
  return id;
}

describe("fold dispatch and a refused turn", () => {
  it("does not count a refused turn larger than the threshold: no fold job is sent", async () => {
    const id = await playWithBigFirstTurn("@stop refusal");
    const m = await meta(id);
    expect(m.unsummarizedChars).toBeGreaterThan(THRESHOLD);
    expect(m.foldableChars).toBeLessThanOrEqual(THRESHOLD);
    expect(m.foldInFlight).toBe(false);
    expect(await leaseJob(id)).toBeNull();
  });

  it("still counts the same turn answered: a fold job is sent", async () => {
    const id = await playWithBigFirstTurn("@reply-chars 40");
    expect((await meta(id)).foldableChars).toBeGreaterThan(THRESHOLD);
    expect(await leaseJob(id)).not.toBeNull();
  });
});
