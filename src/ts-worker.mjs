// Entry of the builder, trainer and ingest worker threads: imports the real entry named in
// workerData.entry (a file: URL of a .ts module) from dist/ or through tsx (load-entry.mjs).
// workerData.niceness, when given, lowers this thread's CPU priority first (Linux: setpriority
// on the thread id applies to that thread only; elsewhere it is skipped). workerData.idle puts
// the thread in Linux's SCHED_IDLE class besides: a thread at nice 19 still ran out its time
// slice when a serving thread woke, and the requests waited (p99 at 4 connections beside a model
// rebuild 1.77 ms against 1.08 ms alone, 100,000 items on one core); an idle-class thread gives
// way at once (1.03–1.14 ms) and still gets what the core leaves over. Node has no call for it:
// util-linux's chrt sets it; without chrt (or off Linux) the thread keeps its niceness alone.
import { spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import { importEntry } from './load-entry.mjs';

if (workerData.niceness || workerData.idle) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (workerData.niceness) setPriority(tid, workerData.niceness);
    if (workerData.idle) spawnSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 5000 });
  } catch {
    // Not Linux: the thread keeps the process's priority.
  }
}

await importEntry(workerData.entry);
