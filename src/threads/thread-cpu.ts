/**
 * @module threads/thread-cpu
 * A coarse clock of the calling OS thread's CPU time, for pacing periodic work by what it costs
 * the thread rather than by the wall clock: on a shared core a builder flush at a low priority
 * took 10.4 s of wall time while requests were served beside it, far more than its CPU. Linux:
 * the first field of /proc/thread-self/schedstat (ns on a CPU), opened once per thread (the
 * descriptor stays bound to the thread that opened it). The kernel brings it up to date at the
 * scheduler's ticks and switches only, so it is good to a few ms: right for a cost of tens of ms
 * or more, not for timing a 1 ms commit. Measured against process.cpuUsage() in a one-thread
 * process, 0.5–1.5 ms of work read 0.87 ms short on average (ticks every 4 ms here, HZ=250). An
 * `exact` clock first sleeps 20 µs (a futex wait), a switch that brings the count up to date: then
 * 0.03 ms short, at ~0.1 ms of wall time and ~30 µs of CPU per reading; for timing the periodic
 * commits issue 12 asks under 1 ms each. A plain read costs ~5 µs. Elsewhere, or without /proc,
 * the wall clock stands in.
 */
import { openSync, readSync } from 'node:fs';

/** A clock of the calling thread's CPU time, ms; call it only on the thread that made it. */
export function threadCpuClock(exact = false): () => number {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return () => performance.now();
  }
  const bytes = Buffer.alloc(64);
  const cell = new Int32Array(new SharedArrayBuffer(4));
  return () => {
    if (exact) Atomics.wait(cell, 0, 0, 0.02);
    const n = readSync(fd, bytes, 0, bytes.length, 0);
    const end = bytes.indexOf(0x20);
    return Number(bytes.toString('latin1', 0, end > 0 && end < n ? end : n)) / 1e6;
  };
}
