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
import type { EventConsumer } from './environment-model.ts';
import { ReportState } from './reports.ts';

export class EnvironmentReports implements EventConsumer {
  readonly #reports: ReportState;

  /** `countedUpTo`: the reports position stored (0 when nothing of this environment's reports was ever written). */
  constructor(store: Store, environment: string, config: EnvironmentConfig, countedUpTo: number) {
    this.#reports = new ReportState(store, environment, config.model.attributionWindowSec, countedUpTo);
  }

  get resumeFrom(): number {
    return this.#reports.resumeFrom;
  }

  get problem(): string | undefined {
    return this.#reports.problem;
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

  prepareSnapshot(position: number, final: boolean): (() => void) | undefined {
    return this.#reports.prepareSnapshot(position, final);
  }
}
