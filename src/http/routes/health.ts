/**
 * @module http/routes/health
 * Liveness for load balancers and the README's first check: 200 once requests are served, with
 * the model builder's progress (events applied, acceptance-to-model lag; per environment its
 * applied log position, how far the log is ahead of it, and the newest event it has seen) and
 * the trained model in service for operators; and how far its copy of the catalog's item layout
 * is behind the change feed. One log read per environment (store/event-log.ts endOf) and one
 * counter read: the ends, whichever thread appended.
 */
import type { AttemptStats } from '../../auth/attempt-limiter.ts';
import type { MsHistogram, MsSummary } from '../../metrics/ms-histogram.ts';
import type { ModelBuilder } from '../../main-thread/model-builder.ts';
import type { BuilderStats } from '../../builder/builder-worker.ts';
import type { ModelTrainer } from '../../main-thread/model-trainer.ts';
import type { ProcessMonitor } from '../../main-thread/process-monitor.ts';
import type { Catalog } from '../../store/catalog.ts';
import type { EventLog } from '../../store/event-log.ts';
import { sendJson } from '../respond.ts';
import type { HttpServer } from '../server.ts';
import { lmdbBuild } from '../../store/lmdb-build.ts';

function processToWire(monitor: ProcessMonitor) {
  const s = monitor.stats();
  return {
    rss_bytes: s.rssBytes,
    rss_anon_bytes: s.rssAnonBytes ?? null,
    heap_used_bytes: s.heapUsedBytes,
    external_bytes: s.externalBytes,
    event_loop_delay_ms: { p50: s.eventLoopDelay.p50Ms, p99: s.eventLoopDelay.p99Ms, max: s.eventLoopDelay.maxMs },
    // Per thread kind since start: pauses, those over 5 ms (issue 11's bound), the longest, and counts by GC_BUCKETS_MS.
    gc_pauses: Object.fromEntries(
      Object.entries(s.gcPauses).map(([thread, p]) => [thread, { count: p.count, over_5ms: p.over5Ms, max_ms: p.maxMs, buckets: p.buckets }]),
    ),
    // Per thread kind: the V8 heaps' bytes in use and held, and the external memory their objects
    // own, summed over its threads (workers' as of their last collection or within 10 s).
    heaps: Object.fromEntries(
      Object.entries(s.heaps).map(([thread, h]) => [thread, { used_bytes: h.usedBytes, total_bytes: h.totalBytes, external_bytes: h.externalBytes, threads: h.threads }]),
    ),
    // false: the prebuilt module, whose free-list bug can fail a commit or abort the process
    // (store/lmdb-build.ts). Not its path: /health answers anyone; the start's warning names it.
    lmdb: { freelist_fix: lmdbBuild().freelistFixed },
  };
}

export interface HealthExtras {
  /** Counters of the token endpoint (auth/attempt-limiter.ts). */
  tokenEndpoint?: AttemptStats;
  process?: ProcessMonitor;
  /** For the log's end per environment (the builder's lag in events). */
  eventLog?: EventLog;
  /** For the change feed's end (the builder's lag in catalog changes). */
  catalog?: Pick<Catalog, 'lastChangeSeq'>;
  /** How long each request-counter flush holds the main thread. */
  requestCounterFlush?: MsHistogram;
}

/** A position applied and the end of its feed (this thread's snapshot may be older than the report). */
function positionsToWire(applied: number, feedEnd = applied) {
  const end = Math.max(applied, feedEnd);
  return { applied_position: applied, log_position: end, lag_changes: end - applied };
}

const msToWire = (s: MsSummary) => ({ count: s.count, p50: s.p50Ms, p99: s.p99Ms, max: s.maxMs });
/** A timing summary as /health shows it (`flush_ms`), for its readers (benchmarks, tests). */
export type MsSummaryWire = ReturnType<typeof msToWire>;

const ms3 = (ms: number) => Math.round(ms * 1000) / 1000;
/** A builder thread's flushes by their CPU time: how many, and the mean in ms. */
const flushCpuToWire = (stats: BuilderStats) => ({ count: stats.flush.count, mean: stats.flush.count > 0 ? ms3(stats.flushCpuMs / stats.flush.count) : null });
/** A builder thread's snapshots: how many, the last one's wall and CPU time, their CPU time on average (ms). */
const snapshotsToWire = ({ snapshots: s }: BuilderStats) => ({
  count: s.count,
  last_ms: s.count > 0 ? ms3(s.lastMs) : null,
  last_cpu_ms: s.count > 0 ? ms3(s.lastCpuMs) : null,
  mean_cpu_ms: s.count > 0 ? ms3(s.cpuMs / s.count) : null,
});

export function registerHealthRoute(server: HttpServer, builder: ModelBuilder, trainer?: ModelTrainer, extras: HealthExtras = {}): void {
  const { tokenEndpoint, eventLog, catalog } = extras;
  server.route('get', '/health', { status: {} }, (ex) => {
    const stats = builder.stats;
    const now = Date.now();
    sendJson(ex, 200, {
      status: 'ok',
      process: extras.process ? processToWire(extras.process) : null,
      // Failed client authentications and refusals since start (auth/attempt-limiter.ts).
      token_endpoint: tokenEndpoint
        ? {
            failed_attempts: tokenEndpoint.failedAttempts,
            rate_limited: tokenEndpoint.rateLimited,
            locked_out: tokenEndpoint.lockedOut,
            lockouts: tokenEndpoint.lockouts,
          }
        : null,
      model_builder: stats
        ? {
            events_applied: stats.applied,
            lag_ms: { p50: stats.lag.p50Ms, p99: stats.lag.p99Ms, max: stats.lag.maxMs },
            // How long a flush holds the builder's thread (issue 12: periodic commits under 1 ms each).
            flush_ms: msToWire(stats.flush),
            // Their CPU time on average (the thread's exact CPU clock, threads/thread-cpu.ts).
            flush_cpu_ms: flushCpuToWire(stats),
            // The ranking workers told which neighbour rows changed between flushes (store/live-rows.ts): how many times, their mean CPU.
            publish_cpu_ms: { count: stats.publishes.count, mean: stats.publishes.count > 0 ? ms3(stats.publishes.cpuMs / stats.publishes.count) : null },
            // The report counters' commits, in their own thread (null until it reports).
            reports_flush_ms: builder.reportsStats ? msToWire(builder.reportsStats.flush) : null,
            reports_flush_cpu_ms: builder.reportsStats ? flushCpuToWire(builder.reportsStats) : null,
            // Their clicks and units, snapshotted apart about once a minute (builder/report-snapshot.ts).
            reports_snapshots: builder.reportsStats ? snapshotsToWire(builder.reportsStats) : null,
            positions: stats.positions,
            skipped: stats.skipped,
            // The item layout (filter arrays, content vectors, item view records) of catalog changes:
            // a ranking worker applies a change itself at once; the builder's copy is what a start reads.
            catalog: positionsToWire(stats.catalogPosition, catalog?.lastChangeSeq()),
            environments: Object.fromEntries(
              Object.entries(stats.positions).map(([environment, applied]) => {
                const newest = stats.newestEventAt[environment];
                const reports = builder.reportsStats?.positions[environment];
                // This thread's read snapshot may be older than the builder's report.
                const end = Math.max(applied, eventLog?.endOf(environment) ?? applied);
                return [
                  environment,
                  {
                    applied_position: applied,
                    log_position: end,
                    lag_events: end - applied,
                    newest_event_at: newest === undefined ? null : new Date(newest).toISOString(),
                    newest_event_age_ms: newest === undefined ? null : now - newest,
                    reports_position: reports ?? null,
                    reports_lag_events: reports === undefined ? null : Math.max(0, end - reports),
                  },
                ];
              }),
            ),
          }
        : null,
      request_counter: extras.requestCounterFlush ? { flush_ms: msToWire(extras.requestCounterFlush.summary()) } : null,
      // Per environment: the last successful trained-model build (time, memory) and failures.
      trained_model: trainer
        ? Object.fromEntries(
            [...trainer.stats].map(([environment, s]) => [
              environment,
              {
                building: s.building,
                builds: s.builds,
                failures: s.failures,
                last_build: s.last
                  ? {
                      version: s.last.version,
                      items: s.last.items,
                      users: s.last.users,
                      interactions: s.last.interactions,
                      events_position: s.last.eventsPosition,
                      built_at: new Date(s.last.builtAt).toISOString(),
                      age_ms: now - s.last.builtAt,
                      build_ms: s.last.buildMs,
                      memory_bytes: s.last.memoryBytes,
                      peak_rss_bytes: s.last.peakRssBytes ?? null,
                    }
                  : null,
                last_error: s.lastError ? { at: new Date(s.lastError.at).toISOString(), error: s.lastError.error } : null,
              },
            ]),
          )
        : null,
    });
  });
}
