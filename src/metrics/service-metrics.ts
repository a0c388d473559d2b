/**
 * @module metrics/service-metrics
 * The Prometheus metrics of the service (prom-client), served at GET /metrics. The hot path only
 * adds to typed arrays resolved once per route and status (request-histogram.ts: prom-client's
 * labelled children hash their labels on every call); everything else (builder, trainer, pool, LMDB, feeds, imports) is read when
 * Prometheus scrapes, from the components' own stats. Owns no component and starts no timer
 * beyond prom-client's default collectors (GC pauses, event-loop delay, memory).
 */
import { statSync } from 'node:fs';
import { EVENT_TYPES } from '../domain/event.ts';
import { modelDataFile, reportsDataFile, storeDataFile } from '../store/open.ts';
import { COMMIT_BUCKETS, MsHistogram } from './ms-histogram.ts';
import { RequestHistogram, type RequestCounts } from './request-histogram.ts';
import { AggregatorRegistry, Counter, Gauge, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/** Request latency buckets, seconds: 0.25 ms (a cached answer) to 10 s (a long upload). */
const LATENCY_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** Event types as metric labels by index; types outside SPEC.md's table count as the last, `unknown`. */
const EVENT_TYPE_LABELS = [...Object.keys(EVENT_TYPES), 'unknown'];
const EVENT_TYPE_INDEX = new Map(EVENT_TYPE_LABELS.slice(0, -1).map((type, i) => [type, i]));
const UNKNOWN_TYPE = EVENT_TYPE_LABELS.length - 1;

type EventOutcome = 'accepted' | 'rejected';

/** The sources read at scrape time; each is optional so a partly started service still answers. */
export interface MetricSources {
  builder?: () => { applied: number; positions: Record<string, number>; newestEventAt?: Record<string, number>; metrics?: MetricObjectWithValues<MetricValue<string>>[] } | undefined;
  trainer?: () => ReadonlyMap<string, { builds: number; failures: number; last?: { version: number; builtAt: number; buildMs: number; eventsPosition?: number } }>;
  /** The event log's end (seq of the newest event) of an environment. */
  logEnd?: (environment: string) => number;
  poolQueueDepth?: () => number;
  /** V8 heaps by thread kind (main-thread/process-monitor.ts). */
  heaps?: () => Record<string, { usedBytes: number; totalBytes: number; externalBytes: number }>;
  dataDir?: string;
  feeds?: () => Array<{ environment: string; feedId: string; polls: number; outcome?: string; consecutiveFailures: number; entriesRejected: number }>;
  imports?: () => Array<{ environment: string; state: string }>;
}

/** Observes one finished request: `status` is what was written (0: the client aborted first). */
export type RequestObserver = (status: number, seconds: number) => void;

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'route' | 'method' | 'status'>;
  readonly #latency: RequestHistogram;
  readonly #events: Counter<'environment' | 'event_type' | 'outcome'>;
  /** Requests per label set (the histogram's counts) and how many the counter has taken. */
  readonly #requestCounts: Array<{ counts: RequestCounts; reported: number }> = [];
  /** Events counted since the last scrape, per environment and outcome, by type index. */
  readonly #eventCounts = new Map<string, Record<EventOutcome, Float64Array>>();
  #sources: MetricSources = {};
  /** How long each request-counter flush holds the main thread (main-thread/request-counter.ts). */
  readonly requestCounterFlush = new MsHistogram(
    'affinity_request_counter_flush_seconds',
    "Time one flush of the recommendation request counters holds the main thread (the commit itself runs on LMDB's write thread)",
    COMMIT_BUCKETS,
    this.registry,
  );

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    const requestCounts = this.#requestCounts;
    this.#requests = new Counter({
      name: 'affinity_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status (0: client aborted)',
      labelNames: ['route', 'method', 'status'],
      registers,
      // The hot path only counts in the latency histogram's arrays; the counter takes the new ones when scraped.
      collect() {
        for (const c of requestCounts) {
          if (c.counts.count > c.reported) this.inc(c.counts.labels, c.counts.count - c.reported);
          c.reported = c.counts.count;
        }
      },
    });
    this.#latency = new RequestHistogram('affinity_http_request_duration_seconds', 'HTTP request latency from routing to the last byte written', LATENCY_BUCKETS, this.registry);
    const eventCounts = this.#eventCounts;
    this.#events = new Counter({
      name: 'affinity_events_total',
      help: 'Tracked events by environment, event type and outcome (accepted, rejected)',
      labelNames: ['environment', 'event_type', 'outcome'],
      registers,
      // The hot path only adds to typed arrays; the counter children take the sums when scraped.
      collect() {
        for (const [environment, outcomes] of eventCounts) {
          for (const outcome of ['accepted', 'rejected'] as const) {
            const counts = outcomes[outcome];
            for (let i = 0; i < counts.length; i++) {
              if (counts[i] === 0) continue;
              this.inc({ environment, event_type: EVENT_TYPE_LABELS[i]!, outcome }, counts[i]);
              counts[i] = 0;
            }
          }
        }
      },
    });
    const sources = () => this.#sources;
    new Gauge({
      name: 'affinity_builder_applied_events',
      help: 'Events the model builder has applied and written since start',
      registers,
      collect() {
        const s = sources().builder?.();
        if (s) this.set(s.applied);
      },
    });
    new Gauge({
      name: 'affinity_builder_offset',
      help: 'Last event-log offset the model builder has written, per environment',
      labelNames: ['environment'],
      registers,
      collect() {
        const s = sources().builder?.();
        if (s) for (const [environment, seq] of Object.entries(s.positions)) this.set({ environment }, seq);
      },
    });
    new Gauge({
      name: 'affinity_builder_lag_events',
      help: 'Events logged but not yet written by the model builder, per environment',
      labelNames: ['environment'],
      registers,
      collect() {
        const { builder, logEnd } = sources();
        const s = builder?.();
        if (s && logEnd) for (const [environment, seq] of Object.entries(s.positions)) this.set({ environment }, Math.max(0, logEnd(environment) - seq));
      },
    });
    new Gauge({
      name: 'affinity_builder_newest_event_age_seconds',
      help: 'Age of the newest event the model builder has written (from its acceptance), per environment',
      labelNames: ['environment'],
      registers,
      collect() {
        const s = sources().builder?.();
        for (const [environment, t] of Object.entries(s?.newestEventAt ?? {})) this.set({ environment }, (Date.now() - t) / 1000);
      },
    });
    new Gauge({
      name: 'affinity_model_events_position',
      help: 'Event-log position the trained model in service learned up to, per environment',
      labelNames: ['environment'],
      registers,
      collect() {
        for (const [environment, s] of sources().trainer?.() ?? []) if (s.last?.eventsPosition !== undefined) this.set({ environment }, s.last.eventsPosition);
      },
    });
    new Gauge({
      name: 'affinity_model_version',
      help: 'Version of the trained model serving, per environment (0: none yet)',
      labelNames: ['environment'],
      registers,
      collect() {
        for (const [environment, s] of sources().trainer?.() ?? []) this.set({ environment }, s.last?.version ?? 0);
      },
    });
    new Gauge({
      name: 'affinity_model_age_seconds',
      help: 'Age of the trained model serving, per environment',
      labelNames: ['environment'],
      registers,
      collect() {
        for (const [environment, s] of sources().trainer?.() ?? []) if (s.last) this.set({ environment }, (Date.now() - s.last.builtAt) / 1000);
      },
    });
    new Gauge({
      name: 'affinity_model_build_duration_seconds',
      help: 'Duration of the last trained-model build, per environment',
      labelNames: ['environment'],
      registers,
      collect() {
        for (const [environment, s] of sources().trainer?.() ?? []) if (s.last) this.set({ environment }, s.last.buildMs / 1000);
      },
    });
    new Gauge({
      name: 'affinity_model_builds',
      help: 'Trained-model builds since start, per environment and outcome',
      labelNames: ['environment', 'outcome'],
      registers,
      collect() {
        for (const [environment, s] of sources().trainer?.() ?? []) {
          this.set({ environment, outcome: 'built' }, s.builds - s.failures);
          this.set({ environment, outcome: 'failed' }, s.failures);
        }
      },
    });
    new Gauge({
      name: 'affinity_rank_queue_depth',
      help: 'Recommendation requests waiting for a ranking worker (503 past recommend.maxQueue)',
      registers,
      collect() {
        const depth = sources().poolQueueDepth?.();
        if (depth !== undefined) this.set(depth);
      },
    });
    new Gauge({
      name: 'affinity_thread_heap_bytes',
      help: 'V8 heap bytes by thread kind (summed over its threads; workers as of their last collection or within 10 s): in use (state "used"), held from the system ("total"), and the external memory its objects own ("external": array buffers, WASM memory)',
      labelNames: ['thread', 'state'],
      registers,
      collect() {
        const heaps = sources().heaps?.();
        if (!heaps) return;
        for (const [thread, h] of Object.entries(heaps)) {
          this.set({ thread, state: 'used' }, h.usedBytes);
          this.set({ thread, state: 'total' }, h.totalBytes);
          this.set({ thread, state: 'external' }, h.externalBytes);
        }
      },
    });
    new Gauge({
      name: 'affinity_lmdb_file_bytes',
      help: 'Size of the LMDB data files (the main, model and reports environments together)',
      registers,
      collect() {
        const dir = sources().dataDir;
        if (!dir) return;
        let bytes: number | undefined;
        for (const file of [storeDataFile(dir), modelDataFile(dir), reportsDataFile(dir)]) {
          try {
            bytes = (bytes ?? 0) + statSync(file).size;
          } catch {
            // Not created yet.
          }
        }
        if (bytes !== undefined) this.set(bytes);
      },
    });
    new Gauge({
      name: 'affinity_feed_polls',
      help: 'Polls of each feed since it was added, by the outcome of its last poll',
      labelNames: ['environment', 'feed', 'last_outcome'],
      registers,
      collect() {
        this.reset();
        for (const f of sources().feeds?.() ?? []) this.set({ environment: f.environment, feed: f.feedId, last_outcome: f.outcome ?? 'none' }, f.polls);
      },
    });
    new Gauge({
      name: 'affinity_feed_consecutive_failures',
      help: 'Failed polls in a row, per feed',
      labelNames: ['environment', 'feed'],
      registers,
      collect() {
        this.reset();
        for (const f of sources().feeds?.() ?? []) this.set({ environment: f.environment, feed: f.feedId }, f.consecutiveFailures);
      },
    });
    new Gauge({
      name: 'affinity_imports',
      help: 'Imports (file drops and uploads) kept in the data directory, by state',
      labelNames: ['environment', 'state'],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, { environment: string; state: string; n: number }>();
        for (const i of sources().imports?.() ?? []) {
          const key = `${i.environment}\0${i.state}`;
          const entry = counts.get(key) ?? { environment: i.environment, state: i.state, n: 0 };
          entry.n++;
          counts.set(key, entry);
        }
        for (const c of counts.values()) this.set({ environment: c.environment, state: c.state }, c.n);
      },
    });
  }

  /** Connects the scrape-time sources once the components exist. */
  setSources(sources: MetricSources): void {
    this.#sources = sources;
  }

  /**
   * An observer for one route and method: the per-status children are resolved once, so a
   * request costs one Map lookup, one counter increment and one histogram observation.
   */
  requestObserver(route: string, method: string): RequestObserver {
    const children = new Map<number, RequestCounts>();
    return (status, seconds) => {
      let counts = children.get(status);
      if (!counts) {
        counts = this.#latency.counts(route, method, String(status));
        this.#requestCounts.push({ counts, reported: 0 });
        children.set(status, counts);
      }
      this.#latency.observe(counts, seconds);
    };
  }

  /**
   * Counts a batch of events by type (accepted or rejected): one typed-array increment per event
   * (issue 12: a label key string per event was a known cost of the intake). Types outside
   * SPEC.md's table count as `unknown`, so a client cannot grow the label set.
   */
  countEvents(environment: string, outcome: EventOutcome, events: readonly unknown[]): void {
    let outcomes = this.#eventCounts.get(environment);
    if (!outcomes) {
      outcomes = { accepted: new Float64Array(EVENT_TYPE_LABELS.length), rejected: new Float64Array(EVENT_TYPE_LABELS.length) };
      this.#eventCounts.set(environment, outcomes);
    }
    const counts = outcomes[outcome];
    for (let i = 0; i < events.length; i++) {
      const type = (events[i] as { event_type?: unknown } | null)?.event_type;
      const ix = (typeof type === 'string' ? EVENT_TYPE_INDEX.get(type) : undefined) ?? UNKNOWN_TYPE;
      counts[ix] = counts[ix]! + 1;
    }
  }

  /** Prometheus text format: the main thread's registry plus the model builder worker's. */
  async text(): Promise<string> {
    const builderMetrics = this.#sources.builder?.()?.metrics;
    if (!builderMetrics) return this.registry.metrics();
    return Registry.merge([this.registry, AggregatorRegistry.aggregate([builderMetrics])]).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
