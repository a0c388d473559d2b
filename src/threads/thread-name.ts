/**
 * @module threads/thread-name
 * Names the calling OS thread (Linux `comm`, at most 15 bytes) so that `top -H`, `perf` and the
 * benchmarks' per-thread CPU accounting (/proc/<pid>/task/<tid>/stat) can tell the ranking
 * workers, the model builder, the trainer and the ingest worker apart: Node leaves every thread
 * of the process named `node`. Best effort: elsewhere than Linux it does nothing.
 */
import { writeFileSync } from 'node:fs';

export function nameThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // Not Linux, or /proc not mounted: names are a diagnostic aid only.
  }
}
