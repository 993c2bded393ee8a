// What a fault test checks after every injection: the transcript is byte-identical to what the
// clients were told was saved (sent and answered), the summary invariants hold (the boundary only
// moves forward, the summary fits its cap, messages never change), and the next turn is taken.
import { expect } from "vitest";
import { api, send, transcript, turnMessages } from "./helpers";
import type { StoredMessage } from "../../core/types";

export class Ledger {
  /** Every message a client was told was saved, in order. */
  readonly told: StoredMessage[] = [];
  private through = 0;
  private summary: string | null = null;

  constructor(
    readonly id: string,
    private readonly summaryMaxChars = 6000,
  ) {}

  /** Messages as an answer carried them: the stored messages (the document describes them loosely). */
  record(messages: readonly unknown[]): void {
    this.told.push(...(messages as StoredMessage[]));
  }

  async check(): Promise<void> {
    const t = await transcript(this.id);
    expect(t.map((m) => m.seq)).toEqual(t.map((_, i) => i + 1));
    expect(JSON.stringify(t)).toBe(JSON.stringify(this.told));
    const m = (await api("GET", `/v1/conversations/${this.id}`)).json;
    const through = m.summarizedThroughMessage ?? 0;
    expect(through).toBeGreaterThanOrEqual(this.through);
    if (through === this.through) expect(m.summary).toBe(this.summary);
    if (m.summary !== null) expect(m.summary!.length).toBeLessThanOrEqual(this.summaryMaxChars);
    this.through = through;
    this.summary = m.summary;
  }

  /** A turn that must succeed, recorded. */
  async turn(content: string) {
    const r = await send(this.id, content);
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    this.record(turnMessages(r));
    return r;
  }

  /** The checks, then the next turn, then the checks again. */
  async survives(): Promise<void> {
    await this.check();
    await this.turn("the next turn after the fault");
    await this.check();
  }
}

/** Prints a fault count so a run's log states how many injections each fault kind received. */
export function reportInjections(kind: string, count: number, detail = ""): void {
  console.log(`[faults] ${kind}: ${count} injected${detail ? ` (${detail})` : ""}; survived`);
}
