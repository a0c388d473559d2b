/**
 * @module main-thread/process-monitor
 * The process's own vital signs for /health (and the soak bench): event-loop delay of the main
 * thread over the last completed window, and memory (resident anonymous memory from
 * /proc/self/status on Linux — what grows when the process leaks, unlike RSS, which also counts
 * LMDB's file-backed pages — and the V8 heaps of every thread by kind), and the garbage-collection
 * pauses of every thread (metrics/gc-pauses.ts). Owns one histogram, one timer and the pause counts.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { GcPauses, type GcPauseSummary, type GcThread, type HeapSize } from '../metrics/gc-pauses.ts';

/** Length of one event-loop delay window. */
const WINDOW_MS = 10_000;
const NS_PER_MS = 1e6;

export interface EventLoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface ProcessStats {
  rssBytes: number;
  /** RssAnon of /proc/self/status; undefined where there is no /proc. */
  rssAnonBytes: number | undefined;
  heapUsedBytes: number;
  externalBytes: number;
  eventLoopDelay: EventLoopDelay;
  /** Since start, by thread kind. */
  gcPauses: Record<GcThread, GcPauseSummary>;
  /** V8 heaps by thread kind, summed over its threads (workers' as of their last post, within seconds). */
  heaps: Record<GcThread, HeapSize & { threads: number }>;
}

function rssAnonBytes(): number | undefined {
  try {
    const kb = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

export class ProcessMonitor {
  readonly #histogram: IntervalHistogram;
  readonly #timer: NodeJS.Timeout;
  #last: EventLoopDelay = { p50Ms: 0, p99Ms: 0, maxMs: 0 };
  readonly #gcPauses = new GcPauses();

  constructor() {
    this.#histogram = monitorEventLoopDelay({ resolution: 10 });
    this.#histogram.enable();
    this.#timer = setInterval(() => {
      const h = this.#histogram;
      this.#last = { p50Ms: h.percentile(50) / NS_PER_MS, p99Ms: h.percentile(99) / NS_PER_MS, maxMs: h.max / NS_PER_MS };
      h.reset();
    }, WINDOW_MS).unref();
  }

  /** Memory now, and the event-loop delay of the last completed window (zeros before the first). */
  stats(): ProcessStats {
    const memory = process.memoryUsage();
    return {
      rssBytes: memory.rss,
      rssAnonBytes: rssAnonBytes(),
      heapUsedBytes: memory.heapUsed,
      externalBytes: memory.external,
      eventLoopDelay: this.#last,
      gcPauses: this.#gcPauses.summary(),
      heaps: this.heaps(),
    };
  }

  /** V8 heaps by thread kind (for /metrics, without the rest of stats()). */
  heaps(): ProcessStats['heaps'] {
    return this.#gcPauses.heaps();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#histogram.disable();
    this.#gcPauses.close();
  }
}
