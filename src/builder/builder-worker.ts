/**
 * @module builder/builder-worker
 * Worker entry of the model builder, run as two threads, each a consumer of the event log with its
 * own position (`role`): the model's, which also reads the catalog change feed, and the report
 * counters'. Reads the catalog change feed and each environment's event
 * log (read-only, no lock), applies them to in-memory model state, and every `flushMs` writes
 * what changed: the neighbour rows in transactions of bounded size between its steps, each row
 * with the position it counts up to, then the rest with the positions in one transaction. A
 * restart resumes from the last flushed positions with the state that flush wrote, each row
 * skipping what it counts: nothing is counted twice or missed. The write lock is held only for
 * the puts of already-encoded values, so the
 * main thread's commits (item and event 200s) wait for it as little as possible. Synchronous
 * LMDB calls are fine here: this is not the main thread. Between flushes, the model's thread
 * tells the ranking workers which neighbour rows its events changed; they read them where the
 * builder keeps them (store/live-rows.ts).
 * Over 500 lines: the loop's pacing, the flush and the publish share the thread's positions and
 * pending times; splitting them into modules of their own is issue 17's (the architecture).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import type { Config, StoreConfig } from '../config/types.ts';
import { Catalog } from '../store/catalog.ts';
import { EventLog } from '../store/event-log.ts';
import type { TrackedEvent } from '../domain/event.ts';
import { CHANGES_POSITION_KEY, eventsPositionKey, reportsPositionKey } from '../store/model-layout.ts';
import { hasEventRollups, moveReportRecords } from '../store/report-keys.ts';
import { onStoreChange, signalStoreChange } from '../store/change-signal.ts';
import { Store } from '../store/open.ts';
import { EnvironmentModel, usableItemType, type EventConsumer, type SkipCounts } from './environment-model.ts';
import { ReportState } from './reports.ts';
import { ItemIndices } from './item-indices.ts';
import { migrateConsumerRecords } from './consumer-records.ts';
import { ItemLayoutState } from './item-layout.ts';
import type { MsSummary } from '../metrics/ms-histogram.ts';
import { BuilderHistograms } from './builder-histograms.ts';
import type { RequestCounts } from '../domain/request-counts.ts';
import { RequestCountsWriter } from './request-counts.ts';
import { nameThread } from '../threads/thread-name.ts';
import { reportGcPauses } from '../metrics/gc-pauses.ts';
import { threadCpuClock } from '../threads/thread-cpu.ts';
import { transactionSyncRetried } from '../store/commit.ts';
import type { LiveRowsMemory } from '../store/live-rows.ts';

export interface BuilderWorkerData {
  /**
   * Which consumer of the event log this thread is: the model (histories, co-occurrence,
   * popularity, the item layout and the request counters) or the report counters
   * (reports.ts), each with its own position.
   */
  role: 'model' | 'reports';
  /** A BigInt64Array's memory, a slot per environment: how far the model has assigned item indices (readableEnd). */
  indexedUpTo: SharedArrayBuffer;
  store: StoreConfig;
  environments: Config['environments'];
  /**
   * Longest sleep while nothing new arrives: commits signal the builder (store/change-signal),
   * so this only bounds how late a missed signal is noticed.
   */
  pollMs: number;
  /** Most events (per environment) or catalog changes read in one step. */
  chunkSize: number;
  /** Least time between two steps while caught up: events gather into larger steps. */
  minStepMs: number;
  /**
   * How often applied changes are written while events keep arriving (and `publishMs` after the
   * last when they stop); with live rows, the rows ranking reads are published in between.
   */
  flushMs: number;
  /**
   * The model's thread: per environment, the shared memory its neighbour rows live in, which the
   * ranking workers read (store/live-rows.ts); every `publishMs` between flushes they are told
   * which rows the events changed (the acceptance-to-ranking lag). None: no publishes.
   */
  liveRows?: Record<string, LiveRowsMemory>;
  publishMs: number;
  /**
   * Longest wait between flushes while behind (a step read a full chunk); the pace below it
   * follows the flushes' cost (CATCH_UP_FLUSH_SHARE). A flush rewrites every row and history an
   * event touched, whole, so its cost grows with how often it runs, not with the events: a fixed
   * 2 s pace made a 1,000,000-event replay take 41.6 s, 8 s 31.4 s (builder 39.3 → 29.6 µs per
   * event). Once caught up, flushMs applies again at once: the pace that keeps the model fresh.
   */
  catchUpFlushMs: number;
  /**
   * How often catalog changes are written: the item layout is written as whole arrays (10 bytes
   * per item, 1 MB at 100,000 items), so it keeps the slower pace it had when everything was
   * written every 500 ms; written every 100 ms it cut item PUTs by a quarter on a shared core.
   */
  layoutFlushMs: number;
  /**
   * Changed items at which the item layout is written whatever the pace: each holds a content
   * vector and an item view entry until then, and the flush loads the chunks they fall in. Paced
   * by cost alone, a 1,000,000-row file drop left the builder holding ~900,000 of them for one
   * flush: the process's anonymous memory went from ~850 MB to 1.3 GB after the import finished.
   */
  layoutFlushItems: number;
  statsIntervalMs: number;
}

/** Posted once the thread's start-up writes are done (the model's: the reports thread waits for it). */
export interface BuilderStarted {
  type: 'started';
}

/** The neighbour rows a flush rewrote (committed), for the ranking workers' row caches. */
export interface BuilderRows {
  type: 'rows';
  environment: string;
  ix: Uint32Array;
}

/** A stored snapshot this thread could not use (it replays the log instead), for the main thread's log. */
export interface BuilderProblem {
  type: 'problem';
  environment: string;
  problem: string;
}

/** Messages the worker posts to the main thread. */
export interface BuilderStats {
  type: 'stats';
  /** Events applied and written since start. */
  applied: number;
  /**
   * Acceptance-to-ranking lag since start (the model's thread; the reports' records none): until
   * the event's rows are published, or written when not published first.
   */
  lag: MsSummary;
  /** How long each flush held the builder's thread, since start. */
  flush: MsSummary;
  /**
   * The CPU time of the flushes since start (as many as `flush` counts), summed from the thread's
   * CPU clock (threads/thread-cpu.ts): good to a scheduler tick per reading, so only the mean over many
   * flushes says what one costs (issue 12: periodic commits under 1 ms of CPU each; the wall time
   * above includes preemption).
   */
  flushCpuMs: number;
  /** The publishes of neighbour rows between flushes since start: how many, and their CPU time in all. */
  publishes: { count: number; cpuMs: number };
  /**
   * The snapshots of state kept apart from the flushes (the report counters' clicks and units),
   * since start: how many, the last one's wall and CPU time, and their CPU time in all.
   */
  snapshots: { count: number; lastMs: number; lastCpuMs: number; cpuMs: number };
  /** The histograms for /metrics (prom-client JSON). */
  metrics: Awaited<ReturnType<BuilderHistograms['metrics']>>;
  /** Events (partly) skipped since start, by reason. */
  skipped: Record<string, number>;
  /** Last event sequence number written, per environment. */
  positions: Record<string, number>;
  /** Acceptance time (Unix ms) of the newest event written, per environment (absent before the first). */
  newestEventAt: Record<string, number>;
  /** Last catalog change whose item layout is written (readable). */
  catalogPosition: number;
}


const data = workerData as BuilderWorkerData;
const reportsRole = data.role === 'reports';
/**
 * Per environment (in `data.environments` order), the last event whose item index the model
 * thread has committed: it assigns them as it reads each chunk. Shared with the reports thread.
 */
const indexedUpTo = new BigInt64Array(data.indexedUpTo);
const environmentSlot = new Map(Object.keys(data.environments).map((environment, slot) => [environment, slot]));

nameThread(reportsRole ? 'aff-reports' : 'aff-builder');
// Both are the model builder's threads to /health.
reportGcPauses('builder');
const store = new Store(data.store);
const catalog = new Catalog(store);
const eventLog = new EventLog(store);
/** The catalog's side: the model's alone. */
const layout = reportsRole ? undefined : new ItemLayoutState(store, data.environments);
layout?.migrateVectors();
layout?.makeItemView();
const itemIndices = new ItemIndices(store);
const positionKey = reportsRole ? reportsPositionKey : eventsPositionKey;
/**
 * Where this thread's state and positions are written: the model environment, or the reports
 * environment for the report counters (a small commit there does not pay for the model's free
 * list: store/open.ts).
 */
const stateRoot = reportsRole ? store.reportsRoot : store.modelRoot;
const stateDb = reportsRole ? store.reportState : store.modelState;
const models = new Map<string, EventConsumer>();
const positions: Record<string, number> = {};
const written: Record<string, number> = {};
/** Acceptance time of the newest event applied, and of the newest written, per environment. */
const newestApplied: Record<string, number> = {};
const newestWritten: Record<string, number> = {};
for (const [environment, config] of Object.entries(data.environments)) {
  if (!reportsRole) {
    migrateConsumerRecords(store, environment);
    moveReportRecords(store, environment);
  }
  const stored = (stateDb.get(positionKey(environment)) as number | undefined) ?? 0;
  // Rows a builder that died left in the shared memory are dropped (CooccurrenceState): this one replays their events.
  const live = data.liveRows?.[environment];
  // Position 0: no flush ever wrote this environment's state, so first touches need not read it.
  const model: EventConsumer = reportsRole ? new ReportState(store, environment, config.model.attributionWindowSec, stored) : new EnvironmentModel(store, environment, config, stored === 0, live);
  models.set(environment, model);
  // A consumer with a snapshot of its own may start before its stored position (its state replayed alone).
  positions[environment] = model.resumeFrom ?? stored;
  written[environment] = stored;
  if (model.problem) parentPort!.postMessage({ type: 'problem', environment, problem: model.problem } satisfies BuilderProblem);
}
if (!reportsRole) {
  // Every item index up to the written position exists.
  for (const environment of models.keys()) publishIndexed(environment, positions[environment]!);
  // Reports written by a builder that kept them itself (event rollups, no reports position) cover
  // what its position covers; set before the reports thread starts (it waits for 'started').
  // Nothing is written otherwise: an absent position is 0, and a new store's is written by the
  // reports thread's first flush.
  const inherited = Object.keys(data.environments).filter(
    (environment) => positions[environment]! > 0 && store.reportState.get(reportsPositionKey(environment)) === undefined && hasEventRollups(store.reportState, environment),
  );
  if (inherited.length > 0) transactionSyncRetried(store.reportsRoot, () => {
    for (const environment of inherited) store.reportState.put(reportsPositionKey(environment), positions[environment]!);
  });
}
parentPort!.postMessage({ type: 'started' } satisfies BuilderStarted);
let changesPosition = (store.modelState.get(CHANGES_POSITION_KEY) as number | undefined) ?? 0;
let changesWritten = changesPosition;
/** changesWritten once readable by other threads (what /health reports). */
let changesReadable = changesPosition;
const histograms = new BuilderHistograms();
/**
 * The recommendation requests' report counters the main thread posts to the report counters'
 * thread, written with its next flush (the reports environment's one writer).
 */
const requestCounts = reportsRole ? new RequestCountsWriter(store) : undefined;
const skipped: SkipCounts = new Map();
/** Acceptance times of events applied but neither published nor written (the lag). */
const unpublished: number[] = [];
/** Events applied and not yet written. */
let unwritten = 0;
/** Whether events' rows are published between flushes. */
const publishing = data.liveRows !== undefined;
let applied = 0;
let stopping = false;


/** Model thread: events up to `seq` have their item indices (kept monotonic across a restart from an older position). */
function publishIndexed(environment: string, seq: number): void {
  const slot = environmentSlot.get(environment)!;
  if (BigInt(seq) > Atomics.load(indexedUpTo, slot)) Atomics.store(indexedUpTo, slot, BigInt(seq));
}

/**
 * The last event the thread may apply: the log's end for the model; for the report counters the
 * last whose item index the model has committed, so that every index they look up exists and
 * they never take the catalog environment's write lock, which event appends wait for: at
 * a low priority beside serving, their own index commits held event 200s up (events beside
 * requests fell from ~10,000 to ~6,500 a second in the recommendations bench). Not the model's
 * written position: that moves only at its flushes, seconds apart while it catches up, and a
 * replay's report counters then finished well after the model (9.1 s against 7.2).
 */
function readableEnd(environment: string): number {
  return reportsRole ? Number(Atomics.load(indexedUpTo, environmentSlot.get(environment)!)) : Infinity;
}

/** A chunk's events as parallel arrays (time, event, item type, item id), reused from chunk to chunk (ingest). */
const chunk: [number[], TrackedEvent[], Array<string | undefined>, string[]] = [[], [], [], []];

/** Whether the last step read a full chunk (more is waiting). */
let behind = false;
/** Whether a step read a full chunk since the last flush: reaching the log's end then ends a catch-up. */
let behindSinceFlush = false;

/** Applies one chunk of what is new; returns how many records it consumed. */
function ingest(): number {
  let consumed = 0;
  const changes = layout ? catalog.changesSince(changesPosition, data.chunkSize) : [];
  behind = changes.length === data.chunkSize;
  if (layout && changes.length > 0) {
    layout.apply(changes);
    changesPosition = changes[changes.length - 1]!.seq;
    consumed += changes.length;
  }
  for (const [environment, model] of models) {
    // One chunk in parallel arrays (acceptance time, event, item type and id): no object per event.
    const [times, events, types, ids] = chunk;
    const config = data.environments[environment]!;
    let n = 0;
    const after = positions[environment]!;
    const most = Math.min(data.chunkSize, readableEnd(environment) - after);
    for (const { first, t, events: batch } of most > 0 ? eventLog.batchesAfter(environment, after) : []) {
      let i = Math.max(0, after + 1 - first);
      for (; i < batch.length && n < most; i++, n++) {
        const e = batch[i]!;
        times[n] = t;
        events[n] = e;
        types[n] = model.usesItemIndex?.(e) === false ? undefined : usableItemType(config, e, skipped);
        ids[n] = e.action_item as string;
      }
      positions[environment] = first + i - 1;
      if (n === most) break;
    }
    if (n === 0) continue;
    if (n === data.chunkSize) behind = true;
    times.length = events.length = types.length = ids.length = n;
    const ixs = itemIndices.resolve(environment, types, ids);
    if (!reportsRole) {
      publishIndexed(environment, positions[environment]!);
    }
    for (let i = 0; i < n; i++) {
      model.apply(times[i]!, events[i]!, ixs[i], after + 1 + i);
      unpublished.push(times[i]!);
    }
    unwritten += n;
    newestApplied[environment] = Math.max(newestApplied[environment] ?? 0, times[n - 1]!);
    consumed += n;
  }
  if (behind) behindSinceFlush = true;
  return consumed;
}

/**
 * While behind, the share of the builder's time its flushes may take: the next flush waits for
 * the last one's CPU time divided by this share (at least flushMs, at most catchUpFlushMs). A
 * flush rewrites every row and history the events since the last touched, so its cost grows with
 * the state touched, not with the events: a fixed pace either flushed small states needlessly
 * seldom (lag) or large ones too often (a 1M-event replay spent ~27% of its time flushing). CPU
 * time, not wall time: at its low priority beside serving, a flush's wall time was up to 10 s,
 * which would have put the next one off to the ceiling.
 */
const CATCH_UP_FLUSH_SHARE = 0.1;
// Exact (a 20 µs sleep per reading): what /health reports of each flush is read off it.
const cpuMs = threadCpuClock(true);
/** CPU time of the last flush, ms. */
let lastFlushCpuMs = 0;
let flushCpuMs = 0;
const snapshots: BuilderStats['snapshots'] = { count: 0, lastMs: 0, lastCpuMs: 0, cpuMs: 0 };
const publishes: BuilderStats['publishes'] = { count: 0, cpuMs: 0 };
/**
 * Set from a flush's commit until other threads can read it: rows it wrote may then be dropped from
 * the shared memory (flushReadable), and nothing is flushed before.
 */
let flushUnreadable: Promise<void> | undefined;
/** The wait before the next flush that keeps flushing within `share` of the thread's time: at least flushMs, at most `ceilingMs`. */
function pacedFlushDelay(share: number, ceilingMs: number): number {
  return Math.min(ceilingMs, Math.max(data.flushMs, lastFlushCpuMs / share));
}
const catchUpFlushDelay = (): number => pacedFlushDelay(CATCH_UP_FLUSH_SHARE, data.catchUpFlushMs);

/**
 * Caught up, the share of the builder's time its flushes may take under a steady arrival: the
 * next flush waits for the last one's CPU time divided by this (at least flushMs, at most ten
 * times it). A flush rewrites each row an event touched since the last whole, and the rows grow:
 * at ~9,400 events/s over 100,000 items a flush a second went from ~45 to ~500 ms of CPU within
 * 150 s (the events bench's sustained round) and the builder fell behind; written every 5 s,
 * the flushes took ~40% less CPU per event (a hot row rewritten once, not five times).
 */
const STEADY_FLUSH_SHARE = 0.2;
const steadyFlushDelay = (): number => pacedFlushDelay(STEADY_FLUSH_SHARE, 10 * data.flushMs);

/** Events between this thread's positions and the log's end. */
function eventsLeft(): number {
  let left = 0;
  for (const environment of models.keys()) left += Math.max(0, eventLog.endOf(environment) - positions[environment]!);
  return left;
}

/**
 * When the events applied flush: at the catch-up pace while behind; at once on the step that
 * reaches the log's end after a catch-up of events no longer arriving (the report counters, at
 * their 1 s pace, wrote a 1,000,000-event replay's end up to a second after they had read it);
 * else at the steady pace. Not after any catch-up: under a steady load a long flush leaves a
 * chunk's worth of events behind it, and flushing again as soon as they were read made the
 * flushes follow each other (~25 every 30 s of ~500 ms each, the sustained round).
 */
function eventsFlushDueAt(): number {
  if (behind) return lastFlush + catchUpFlushDelay();
  if (behindSinceFlush && eventsLeft() === 0 && lastArrival + data.publishMs <= Date.now()) return 0;
  // Publishing, a flush waits for the events to pause (a test's or a quiet site's last event is
  // written within publishMs) or for the steady pace under a steady arrival.
  return publishing ? Math.min(lastFlush + steadyFlushDelay(), lastArrival + data.publishMs) : lastFlush + steadyFlushDelay();
}

/** Tells the ranking workers which neighbour rows the events changed (they read them in shared memory). */
function publish(): void {
  const cpuAtStart = cpuMs();
  for (const [environment, model] of models) {
    const changed: number[] = [];
    model.publish!(changed);
    if (changed.length === 0) continue;
    const rows: BuilderRows = { type: 'rows', environment, ix: Uint32Array.from(changed) };
    parentPort!.postMessage(rows, [rows.ix.buffer as ArrayBuffer]);
  }
  recordLag();
  publishes.count++;
  publishes.cpuMs += cpuMs() - cpuAtStart;
}

/** The events applied since the last publish or flush are visible to ranking. */
function recordLag(): void {
  const now = Date.now();
  for (const t of unpublished) histograms.lag.record(now - t);
  unpublished.length = 0;
}

/**
 * Neighbour rows written per transaction between the builder's steps (builder/cooccurrence.ts
 * prepareRows): ~2 µs of CPU each in LMDB, so a step waits at most ~10 ms for them, and LMDB keeps
 * no more memory than such a transaction dirties. While behind, more at once: the events wait
 * anyway, and each commit costs its free-list merge.
 */
const ROWS_PER_WRITE = 2_000;
const ROWS_PER_WRITE_BEHIND = 20_000;

/** A flush started: its rows are written between steps (writeRowsStep), then finishFlush commits the rest. */
interface OpenFlush {
  withLayout: boolean;
  /** What the flush writes with the positions, encoded at its start (the state at those positions). */
  writes: Array<() => void>;
  eventPositions: Record<string, number>;
  newest: Record<string, number>;
  changes: number;
  /** Events applied before the start: counted as applied once the finish is readable. */
  count: number;
  /** Wall and CPU time the flush has held the thread (its start, each transaction of rows, its finish). */
  heldMs: number;
  cpuMs: number;
}
let openFlush: OpenFlush | undefined;

/**
 * Starts a flush of what was applied; the item layout and the change-feed position only
 * `withLayout`; the request counters' item chunks up to their bound, or `countChunks`
 * (builder/request-counts.ts). Everything but the neighbour rows is encoded now, as the state at
 * the positions applied; the rows changed are written between the next steps, each with the
 * position it counts up to, and the positions only once they all are (a restart replays from
 * them, each row skipping what it counts). At a stop (`final`) all at once, then every snapshot.
 */
function flush(withLayout: boolean, countChunks?: number, final = false): void {
  const startedAt = performance.now();
  const cpuAtStart = cpuMs();
  const writes = withLayout && layout ? [layout.prepareFlush()] : [];
  if (requestCounts) writes.push(requestCounts.prepareFlush(countChunks));
  for (const model of models.values()) {
    writes.push(model.prepareFlush());
    model.rows?.startRows();
  }
  openFlush = { withLayout, writes, eventPositions: { ...positions }, newest: { ...newestApplied }, changes: changesPosition, count: unwritten, heldMs: 0, cpuMs: 0 };
  if (withLayout) changesWritten = changesPosition;
  unwritten = 0;
  behindSinceFlush = false;
  openFlush.cpuMs += cpuMs() - cpuAtStart;
  openFlush.heldMs += performance.now() - startedAt;
  do writeRowsStep(final);
  while (final && openFlush);
}

/** Rows started and not yet written, over the environments. */
function pendingRows(): number {
  let left = 0;
  for (const model of models.values()) left += model.rows?.pendingRows ?? 0;
  return left;
}

/** Writes the open flush's next rows in a transaction of their own, or finishes it when none are left. */
function writeRowsStep(final: boolean): void {
  const open = openFlush!;
  const startedAt = performance.now();
  const cpuAtStart = cpuMs();
  if (pendingRows() > 0) {
    let most = behind || final ? ROWS_PER_WRITE_BEHIND : ROWS_PER_WRITE;
    const puts: Array<() => void> = [];
    for (const [environment, { rows }] of models) {
      if (most === 0) break;
      const pending = rows?.pendingRows ?? 0;
      if (pending === 0) continue;
      // Encoded before the transaction: a retried one puts the same rows again.
      puts.push(rows!.prepareRows(most, positions[environment]!));
      most -= Math.min(most, pending);
    }
    transactionSyncRetried(stateRoot, () => {
      for (const put of puts) put();
    });
    open.cpuMs += cpuMs() - cpuAtStart;
    open.heldMs += performance.now() - startedAt;
    return;
  }
  finishFlush(open);
  open.cpuMs += cpuMs() - cpuAtStart;
  histograms.flush.record(open.heldMs + performance.now() - startedAt);
  lastFlushCpuMs = open.cpuMs;
  flushCpuMs += lastFlushCpuMs;
  lastFlush = lastPublish = Date.now();
  if (open.withLayout) lastLayoutFlush = lastFlush;
  writeSnapshots(open.eventPositions, final);
}

/** Commits what the flush encoded at its start with its positions. */
function finishFlush(open: OpenFlush): void {
  openFlush = undefined;
  // The model's lag alone is reported (/health, /metrics): recorded per event, ~2 ms of each
  // one-second commit of the report counters at ~9,600 events/s, for nothing.
  if (!reportsRole) recordLag();
  unpublished.length = 0;
  const { writes, eventPositions, newest, changes, withLayout, count } = open;
  const changedRows = new Map<string, number[]>();
  for (const [environment, model] of models) {
    const changed: number[] = [];
    model.rows?.takeWritten(changed);
    if (changed.length > 0) changedRows.set(environment, changed);
  }
  // Every write reads what it adds to inside the transaction, so an aborted try can run again.
  transactionSyncRetried(stateRoot, () => {
    for (const write of writes) write();
    // Only a position that moved forward: a flush without events (the lists at start, a new hour)
    // writes nothing a request did not cause, and one during a replay to a snapshot's state alone
    // (behind the stored position) must not move it back.
    for (const [environment, seq] of Object.entries(eventPositions)) if (seq > written[environment]!) stateDb.put(positionKey(environment), seq);
    // The model's alone: the reports thread never reads the change feed (its copy of the position is stale).
    if (withLayout && layout) store.modelState.put(CHANGES_POSITION_KEY, changes);
  });
  // Once other threads' snapshots can see the commit (a transactionSync commit is not always
  // visible to them before it is flushed: see trainer-worker.ts), the ranking workers drop these
  // rows from their caches and read them anew.
  // The positions reported to /health wait for the same, so "applied" means readable.
  flushUnreadable = stateRoot.flushed.then(() => {
    flushUnreadable = undefined;
    for (const model of models.values()) model.flushReadable?.();
    // Counted here, not at the commit: stats are posted when this count moves, and positions
    // that became readable after the last post must not wait for the next event to be reported.
    applied += count;
    wake();
    // The report counters read up to what this thread has indexed (readableEnd): wake them once a
    // flush, not per chunk (a post costs the poster ~1 ms: 7% of the thread at a steady load). Appends
    // wake them too; this one matters after the last.
    if (!reportsRole && count > 0) signalStoreChange();
    for (const [environment, seq] of Object.entries(eventPositions)) written[environment] = Math.max(written[environment]!, seq);
    Object.assign(newestWritten, newest);
    if (withLayout) changesReadable = changes;
    for (const [environment, changed] of changedRows) {
      const rows: BuilderRows = { type: 'rows', environment, ix: Uint32Array.from(changed) };
      parentPort!.postMessage(rows, [rows.ix.buffer as ArrayBuffer]);
    }
  });
}

/**
 * Right after a flush's commit, the snapshots that are due (all of them when `final`): a snapshot
 * never covers more than the stored positions (the report counters' alone snapshot, and they
 * write no rows: their flush finishes where it starts).
 */
function writeSnapshots(eventPositions: Record<string, number>, final: boolean): void {
  for (const [environment, model] of models) {
    if (!model.prepareSnapshot) continue;
    const snapshotStartedAt = performance.now();
    const cpuAtSnapshot = cpuMs();
    const write = model.prepareSnapshot(eventPositions[environment]!, final);
    if (!write) continue;
    transactionSyncRetried(stateRoot, write);
    snapshots.count++;
    snapshots.lastMs = performance.now() - snapshotStartedAt;
    snapshots.lastCpuMs = cpuMs() - cpuAtSnapshot;
    snapshots.cpuMs += snapshots.lastCpuMs;
  }
}

async function postStats(): Promise<void> {
  // The model's histograms alone reach /metrics (a post's prom-client JSON costs ~1 ms).
  const metrics = reportsRole ? [] : await histograms.metrics();
  const [lagSummary, flushSummary] = [histograms.lag.summary(), histograms.flush.summary()];
  // Read together after the await: a flush becoming readable meanwhile moves both.
  const stats: BuilderStats = { type: 'stats', applied, lag: lagSummary, flush: flushSummary, flushCpuMs, publishes: { ...publishes }, snapshots: { ...snapshots }, metrics, skipped: Object.fromEntries(skipped), positions: { ...written }, newestEventAt: { ...newestWritten }, catalogPosition: changesReadable };
  parentPort!.postMessage(stats);
}

/** Ends the current pause (pause()) if what arrived should end it. */
let interrupt: (() => void) | undefined;
/**
 * A wake (a store commit, or a flush of ours becoming readable) stays set until the loop looks
 * again: one that arrives while the loop is busy (after it read the counters, before it went
 * idle) would otherwise be lost, and what it announced would wait for the next event or
 * `pollMs` (CI saw /health stuck 6 s behind).
 */
let signalled = false;
function wake(): void {
  signalled = true;
  interrupt?.();
}
const stopListening = onStoreChange(wake);
// 'stop' ends the loop at once, not when the idle wait would have.
parentPort!.on('message', (message: 'stop' | RequestCounts) => {
  if (message === 'stop') stopping = true;
  else if (message.type === 'requestCounts') requestCounts?.add(message);
  wake();
});
/**
 * Sleeps `ms`; a 'stop' ends it, and so does a store-change signal when `untilSignalled` (else
 * the signal stays set for the next step). Between signals the thread sleeps: no timer fires
 * more often than the flush and stats intervals.
 */
function pause(ms: number, untilSignalled: boolean): Promise<void> {
  if (stopping || (untilSignalled && signalled)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      interrupt = undefined;
      resolve();
    }
    interrupt = () => {
      if (stopping || untilSignalled) done();
    };
  });
}

let lastFlush = Date.now();
let lastLayoutFlush = lastFlush;
let lastPublish = lastFlush;
/** When the newest event applied was accepted (Unix ms; the start until one is). */
let lastArrival = lastFlush;
let lastStats = 0;
let postedApplied = -1;
let postedChanges = -1;
/** Flushes when stats were last posted: one that wrote only request counts moves neither count above. */
let postedFlushes = -1;
/** Publishes when stats were last posted: the lag they record and their count reach /health between flushes (seconds apart). */
let postedPublishes = -1;
const statsMoved = () => applied !== postedApplied || changesReadable !== postedChanges || histograms.flush.count !== postedFlushes || publishes.count !== postedPublishes;
/** The store's counters when ingest() last found nothing new: unchanged means nothing to read. */
let seenEventSeq = -1;
let seenChangeSeq = -1;
while (!stopping) {
  signalled = false;
  // The snapshot lmdb-js keeps until its next timer turn may predate the commit that signalled.
  store.root.resetReadTxn();
  // The report counters read up to what the model has indexed (readableEnd): what moves it.
  const eventSeq = reportsRole ? Object.keys(positions).reduce((sum, environment) => sum + readableEnd(environment), 0) : eventLog.lastSeq();
  const changeSeq = catalog.lastChangeSeq();
  let consumed = 0;
  if (eventSeq !== seenEventSeq || changeSeq !== seenChangeSeq) {
    consumed = ingest();
    if (consumed === 0) [seenEventSeq, seenChangeSeq] = [eventSeq, changeSeq];
  }
  const now = Date.now();
  // When the newest event applied was accepted, not when this thread got to it: at its low
  // priority beside a busy main thread it can wait over publishMs for the core, which read as a
  // pause of the arrivals and flushed at once (several times a second under a steady load).
  if (consumed > 0) for (const t of Object.values(newestApplied)) lastArrival = Math.max(lastArrival, t);
  const pendingEvents = unwritten > 0;
  const pendingChanges = changesPosition !== changesWritten;
  // The models' own due time (a new hour for trending, the lists of a first start) counts as
  // pending events: the flush that is due anyway.
  let modelsDueAt = Infinity;
  for (const model of models.values()) modelsDueAt = Math.min(modelsDueAt, model.flushDueAt);
  const pending = pendingEvents || pendingChanges || modelsDueAt !== Infinity || requestCounts?.pending === true;
  const eventsDueAt = pendingEvents ? eventsFlushDueAt() : modelsDueAt;
  const changesDueAt = !pendingChanges ? Infinity : layout!.pending >= data.layoutFlushItems ? now : lastLayoutFlush + (behind ? Math.max(data.layoutFlushMs, catchUpFlushDelay()) : data.layoutFlushMs);
  // Request counts ride on the flushes' pace: while behind, a flush of its own would rewrite every row the events touched.
  const countsDueAt = requestCounts?.pending ? lastFlush + (behind ? catchUpFlushDelay() : steadyFlushDelay()) : Infinity;
  // While caught up, the rows of what arrived are published every publishMs between flushes.
  const publishDueAt = publishing && !behind && unpublished.length > 0 ? lastPublish + data.publishMs : Infinity;
  const dueAt = Math.min(eventsDueAt, changesDueAt, countsDueAt, publishDueAt);
  if (openFlush) {
    // Its rows, a transaction of them per step; the events' rows are still published meanwhile.
    writeRowsStep(false);
    if (!flushUnreadable && now >= publishDueAt) {
      publish();
      lastPublish = Date.now();
    }
  } else if (flushUnreadable) {
    // Nothing is published or flushed before the last flush is readable (within milliseconds).
  } else if (now >= Math.min(eventsDueAt, changesDueAt, countsDueAt)) {
    flush(now >= changesDueAt);
  } else if (now >= publishDueAt) {
    publish();
    lastPublish = Date.now();
  }
  // Stats only when a flush changed them: an idle builder posts nothing.
  if (statsMoved() && now - lastStats >= data.statsIntervalMs) {
    [lastStats, postedApplied, postedChanges, postedFlushes, postedPublishes] = [now, applied, changesReadable, histograms.flush.count, publishes.count];
    await postStats();
  }
  if (consumed > 0) {
    // Caught up with what arrived (a part chunk): gather for a few ms before the next step. Woken by
    // every append (one wake per 5 ms), a steady ~9,000 events/s came in steps of ~45 events, each
    // with its own item-index commit and reads of the log's ends.
    if (!behind && !stopping) await pause(data.minStepMs, false);
    // More may be waiting: yield to the event loop (a 'stop' message) and go on at once
    // (setImmediate: a 0 ms timer waits a whole millisecond, ~0.2 s of a 1M-event replay's 200 chunks).
    else await yieldToLoop();
    continue;
  }
  if (openFlush) {
    // Its next rows at once, the events that came meanwhile between them.
    await yieldToLoop();
    continue;
  }
  // Caught up: sleep until a commit signals, the pending flush is due, or stats are.
  // A flush that is not readable yet wakes the loop when it is.
  const untilFlush = pending && !flushUnreadable ? Math.max(0, dueAt - now) : Infinity;
  const untilStats = statsMoved() ? Math.max(0, lastStats + data.statsIntervalMs - now) : Infinity;
  await pause(Math.min(untilFlush, untilStats, data.pollMs), true);
}
stopListening();
while (openFlush) writeRowsStep(true);
await flushUnreadable;
flush(true, Infinity, true);
await stateRoot.flushed;
await postStats();
await store.close();
// The 'message' listener keeps parentPort referenced, which would keep this thread (and so a
// graceful shutdown) alive forever; closing it lets the thread exit once the stats are sent.
parentPort!.close();
