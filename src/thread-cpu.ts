/**
 * @module thread-cpu
 * A coarse clock of the calling OS thread's CPU time, for pacing periodic work by what it costs
 * the thread rather than by the wall clock: on a shared core a builder flush at a low priority
 * took 10.4 s of wall time while requests were served beside it, far more than its CPU. Linux:
 * the first field of /proc/thread-self/schedstat (ns on a CPU), opened once per thread (the
 * descriptor stays bound to the thread that opened it). The kernel brings it up to date at the
 * scheduler's ticks and switches only, so it is good to a few ms: right for a cost of tens of ms
 * or more, not for timing a 1 ms commit (the wall clock is, as an upper bound). A read costs
 * ~5 µs. Elsewhere, or without /proc, the wall clock stands in.
 */
import { openSync, readSync } from 'node:fs';

/** A clock of the calling thread's CPU time, ms; call it only on the thread that made it. */
export function threadCpuClock(): () => number {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return () => performance.now();
  }
  const bytes = Buffer.alloc(64);
  return () => {
    const n = readSync(fd, bytes, 0, bytes.length, 0);
    const end = bytes.indexOf(0x20);
    return Number(bytes.toString('latin1', 0, end > 0 && end < n ? end : n)) / 1e6;
  };
}
