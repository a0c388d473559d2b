/**
 * @module model/environment-reports
 * The report counters of one environment (reports.ts) as a consumer of the event log of its own,
 * beside the model builder's: its own worker thread and position, so the counters' ~1.8 µs an
 * event (a 1,000,000-event replay took 8.1–8.4 s with them in the builder's thread, 6.3–6.5 s
 * without) no longer delay the model that recommendations read, and on two cores run beside it.
 * Reports are hourly and daily sums: they may follow the log seconds later.
 */
import type { EnvironmentConfig } from '../config/types.ts';
import type { TrackedEvent } from '../domain/event.ts';
import type { Store } from '../store/open.ts';
import { usableItemType, type EventConsumer, type SkipCounts } from './environment-model.ts';
import { ReportState } from './reports.ts';

export class EnvironmentReports implements EventConsumer {
  readonly #config: EnvironmentConfig;
  readonly #reports: ReportState;
  /** Skips counted here are dropped: the model builder counts and logs them. */
  readonly #skipped: SkipCounts = new Map();

  /** `fresh`: nothing of this environment's reports was ever written (the position is 0). */
  constructor(store: Store, environment: string, config: EnvironmentConfig, fresh = false) {
    this.#config = config;
    this.#reports = new ReportState(store, environment, config.model.attributionWindowSec, fresh);
  }

  /** The item type the clicked-items counters file a click under; skips are the model builder's to count. */
  itemTypeOf(e: TrackedEvent, _skipped: SkipCounts): string | undefined {
    if (this.#skipped.size > 100) this.#skipped.clear();
    return usableItemType(this.#config, e, this.#skipped);
  }

  apply(t: number, e: TrackedEvent, ix: number | undefined): void {
    this.#reports.add(e, t, ix);
  }

  get flushDueAt(): number {
    return Infinity;
  }

  prepareFlush(_changedRows: number[]): () => void {
    return this.#reports.prepareFlush();
  }
}
