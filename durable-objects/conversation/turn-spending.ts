// What a running turn part has spent, on which model: kept in the object as its model calls report
// (a delegated run's calls included, as they report, not only once it returns), so an object that
// dies mid-turn is metered at its next start (meterDeadTurn, index-outbox.ts), one row per model as
// the part's own meter would have written; and that meter, once, through the outbox.
import type { DelegationParent } from "../../agent/turn-deps";
import type { ModelEntry } from "../../core/models/catalog";
import { addUsage, usageSince, type Usage } from "../../core/types";
import { UsageByModel } from "../../core/usage-by-model";
import type { ConversationStore } from "./conversation-store";
import type { IndexOutbox } from "./index-outbox";

export class TurnSpending {
  private spent: Usage;
  private readonly byModel: UsageByModel;

  constructor(
    private readonly part: {
      /** What the turn had spent when this part began (a resumed turn's earlier steps). */
      before: Usage;
      /** The part's ledger key. */
      key: string;
      where: { tenantId: string; conversationId: string };
      store: ConversationStore;
      outbox: IndexOutbox;
      /** The model answering now (a refusal's fallback once it took over). */
      model(): ModelEntry;
    },
  ) {
    this.spent = part.before;
    this.byModel = new UsageByModel(part.before, part.key);
  }

  /** The turn's usage so far, as last reported. */
  get total(): Usage {
    return this.spent;
  }

  /** The turn's running total is now `total` (its loop's onUsage): kept in the object at once. */
  report(total: Usage): void {
    const { key, where, store, before, model } = this.part;
    this.spent = total;
    this.byModel.add(total, model());
    const parts = this.byModel.rows(total, model());
    store.putSpending({ key, ...where, model: model().id, usage: usageSince(total, before), parts });
  }

  /**
   * The delegating parent a sub-agent gets: each rise of its running total is reported as the
   * turn's (its total when the run began plus the run's), so a dead object meters it too. Its
   * loop's own report once the run returns is the same total again, so nothing counts twice.
   */
  delegation(parent: DelegationParent): DelegationParent {
    const atStart = this.spent;
    return {
      ...parent,
      onUsage: (run) => {
        parent.onUsage?.(run);
        this.report(addUsage(atStart, run));
      },
    };
  }

  /** The part's ledger rows, one per model that spent, through the outbox; the kept spending goes. */
  meter(total: Usage): void {
    for (const { key, model, usage } of this.byModel.rows(total, this.part.model()))
      this.part.outbox.meter(key, { ...this.part.where, model, usage });
    this.part.store.clearSpending();
  }
}
