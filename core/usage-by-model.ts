// A turn's usage by the model that spent it. A refusal fallback changes the model within a turn:
// the refused call is billed at the first model, the calls after it at the fallback, and the
// ledger's per-model figures (GET /v1/usage `models`) must say so. Each rise of the turn's
// running total is put down to the model active when it was reported.
import type { ModelEntry } from "./models/catalog";
import { addUsage, usageSince, zeroUsage, type Usage } from "./types";

export class UsageByModel {
  private last: Usage;
  private readonly parts = new Map<string, Usage>();

  /**
   * `before`: what the turn had spent when this run of it began (a resumed turn's earlier steps);
   * `key`: the ledger key of its usage.
   */
  constructor(
    before: Usage,
    private readonly key: string,
  ) {
    this.last = before;
  }

  /**
   * The turn's running total is now `total`; what it rose by was spent on `model`. A model the
   * catalog does not price gets no cost: the total's cost counts its calls as 0, and its row must
   * say unpriced (no cost), not $0.
   */
  add(total: Usage, model: Pick<ModelEntry, "id" | "prices">): void {
    const rise = usageSince(total, this.last);
    this.last = total;
    if (!model.prices) delete rise.cost_usd;
    this.parts.set(model.id, addUsage(this.parts.get(model.id) ?? zeroUsage(), rise));
  }

  /**
   * The ledger rows of `total` (since `before`): one per model that spent, the first under the
   * turn's key, the others under `key:model` (what no report covered goes to `model`).
   */
  rows(total: Usage, model: Pick<ModelEntry, "id" | "prices">): { key: string; model: string; usage: Usage }[] {
    this.add(total, model);
    return [...this.parts].map(([m, usage], i) => ({ key: i ? `${this.key}:${m}` : this.key, model: m, usage }));
  }
}
