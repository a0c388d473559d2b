/**
 * @module metrics/gc-pauses
 * Garbage-collection pauses by thread. Each worker thread observes its own collections (the pause
 * of each collection, from V8's GC callbacks; the steps of an incremental marking are not
 * collections) and posts their durations on a BroadcastChannel; the main thread observes its own
 * and counts everything per thread kind for /health. Issue 11 asks for no pause
 * over 5 ms on the serving threads (main, ranking workers), and --trace-gc names a thread only by
 * its isolate's address: the bench had to guess which isolates served by how often they
 * scavenged, and at 1,000,000 items it may have counted the builder's 932 ms. With each post goes
 * the thread's V8 heap after the collection, so /health can say which threads hold the process's
 * anonymous memory: under a sustained load it passed 600 MB in a minute, the main thread's heap
 * (the only one shown before) 25 MB of it.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { BroadcastChannel, threadId } from 'node:worker_threads';

export const GC_THREADS = ['main', 'ranking', 'builder', 'trainer', 'ingest'] as const;
export type GcThread = (typeof GC_THREADS)[number];

/** Bucket upper bounds, ms: 5 is issue 11's bound; a niced thread's collection can take seconds. */
export const GC_BUCKETS_MS = [1, 2, 5, 10, 20, 50, 100, 250, 1000];
/** The first bucket of the pauses longer than 5 ms. */
export const OVER_5_MS_BUCKET = GC_BUCKETS_MS.indexOf(5) + 1;
const CHANNEL = 'affinity:gc-pauses';
/** A worker posts its heap at least this often, collecting or not; one not heard from for HEAP_STALE_MS has exited. */
const HEAP_POST_MS = 10_000;
const HEAP_STALE_MS = 3 * HEAP_POST_MS;

/**
 * A thread's V8 heap: bytes in use, and bytes the heap holds from the system (what RSS sees); and
 * the external memory its objects own (array buffers, WASM memory: outside the heap; a shared
 * buffer counts in every thread that holds it).
 */
export interface HeapSize {
  usedBytes: number;
  totalBytes: number;
  externalBytes: number;
}

interface PauseMessage {
  thread: GcThread;
  threadId: number;
  ms: number[];
  heap: HeapSize;
}

function heapSize(): HeapSize {
  const h = getHeapStatistics();
  return { usedBytes: h.used_heap_size, totalBytes: h.total_heap_size, externalBytes: h.external_memory };
}

function observe(onPauses: (ms: number[]) => void): PerformanceObserver {
  const observer = new PerformanceObserver((list) => onPauses(list.getEntries().map((e) => e.duration)));
  observer.observe({ entryTypes: ['gc'] });
  return observer;
}

/**
 * In a worker thread: posts the pauses of its collections, as `thread`, for the thread's life.
 * The ranking workers too: Piscina's 'async' atomics (main-thread/ranking-pool.ts) turn their event loop
 * between tasks, where the observer's callback runs; under the former default it never ran there.
 */
export function reportGcPauses(thread: Exclude<GcThread, 'main'>): void {
  const channel = new BroadcastChannel(CHANNEL);
  // Never what keeps a thread alive.
  channel.unref();
  const post = (ms: number[]) => channel.postMessage({ thread, threadId, ms, heap: heapSize() } satisfies PauseMessage);
  // Its heap from the start, after each collection, and every HEAP_POST_MS: the main thread tells
  // a thread that exited (crashed, restarted, or retired by the pool) by its silence.
  post([]);
  observe(post);
  setInterval(() => post([]), HEAP_POST_MS).unref();
}

export interface GcPauseSummary {
  count: number;
  /** Pauses longer than 5 ms. */
  over5Ms: number;
  maxMs: number;
  /** Count per bucket (GC_BUCKETS_MS, then one for the longer ones). */
  buckets: number[];
}

/** Main thread: the pauses of every thread since start, by thread kind. */
export class GcPauses {
  readonly #byThread = new Map<GcThread, { buckets: Float64Array; count: number; maxMs: number }>(
    GC_THREADS.map((t) => [t, { buckets: new Float64Array(GC_BUCKETS_MS.length + 1), count: 0, maxMs: 0 }]),
  );
  /** Each worker thread's heap as of its last post, by thread id (a restarted worker is a new id). */
  readonly #heaps = new Map<number, { thread: GcThread; heap: HeapSize; at: number }>();
  readonly #observer: PerformanceObserver;
  readonly #channel = new BroadcastChannel(CHANNEL);

  constructor() {
    this.#observer = observe((ms) => this.#record('main', ms));
    this.#channel.onmessage = (event) => {
      const { thread, threadId: id, ms, heap } = (event as { data: PauseMessage }).data;
      if (!this.#byThread.has(thread)) return;
      this.#record(thread, ms);
      this.#heaps.set(id, { thread, heap, at: Date.now() });
    };
    this.#channel.unref();
  }

  /** The V8 heaps by thread kind (the main thread's now, the workers' as of their last collection), summed over the threads of a kind. */
  heaps(): Record<GcThread, HeapSize & { threads: number }> {
    const out = Object.fromEntries(GC_THREADS.map((t) => [t, { usedBytes: 0, totalBytes: 0, externalBytes: 0, threads: 0 }])) as Record<GcThread, HeapSize & { threads: number }>;
    const add = (thread: GcThread, heap: HeapSize) => {
      out[thread].usedBytes += heap.usedBytes;
      out[thread].totalBytes += heap.totalBytes;
      out[thread].externalBytes += heap.externalBytes;
      out[thread].threads++;
    };
    add('main', heapSize());
    const now = Date.now();
    for (const [id, { thread, heap, at }] of this.#heaps) {
      if (now - at > HEAP_STALE_MS) this.#heaps.delete(id);
      else add(thread, heap);
    }
    return out;
  }

  #record(thread: GcThread, pauses: readonly number[]): void {
    const t = this.#byThread.get(thread)!;
    for (const ms of pauses) {
      let b = 0;
      while (b < GC_BUCKETS_MS.length && ms > GC_BUCKETS_MS[b]!) b++;
      t.buckets[b]!++;
      t.count++;
      if (ms > t.maxMs) t.maxMs = ms;
    }
  }

  summary(): Record<GcThread, GcPauseSummary> {
    const out = {} as Record<GcThread, GcPauseSummary>;
    for (const [thread, t] of this.#byThread) {
      const buckets = Array.from(t.buckets);
      out[thread] = { count: t.count, over5Ms: buckets.slice(OVER_5_MS_BUCKET).reduce((a, b) => a + b, 0), maxMs: Math.round(t.maxMs * 1000) / 1000, buckets };
    }
    return out;
  }

  close(): void {
    this.#observer.disconnect();
    this.#channel.close();
  }
}
