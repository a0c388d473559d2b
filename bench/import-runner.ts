// One measured run of bench/ingest.bench.ts in a fresh process (so its peak RSS is its own):
//   node --import tsx bench/import-runner.ts csv-parse <file.csv>   the baseline: csv-parse alone, rows counted
//   node --import tsx bench/import-runner.ts import <file.csv>      the real import (store/catalog + run-import, as the ingest worker runs it) into a fresh data dir
// Prints one JSON line: rows, ms, rows/s, and memory: VmHWM (peak RSS of the process), and the
// peaks of anonymous memory (heap, buffers) and of file-backed pages (LMDB's memory map) sampled
// every 100 ms from /proc/self/status.
import { copyFileSync, createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { loadConfig } from '../src/config/load.ts';
import { ensureInboxes, inboxDir, newImportRecord, storedNameFor } from '../src/ingest/imports/inbox.ts';
import { runImport } from '../src/ingest/imports/run-import.ts';
import { Catalog } from '../src/store/catalog.ts';
import { getImport, newImportId, putImport } from '../src/store/imports.ts';
import { Store } from '../src/store/open.ts';
import { procStatusKb } from './wrk-runner.ts';

const [mode, file] = process.argv.slice(2);
if ((mode !== 'csv-parse' && mode !== 'import') || !file) {
  console.error('usage: import-runner.ts csv-parse|import <file.csv>');
  process.exit(2);
}

const statusKb = (field: string) => procStatusKb('self', field)[field] ?? 0;
let peakAnonKb = 0;
let peakFileKb = 0;
const sampler = setInterval(() => {
  peakAnonKb = Math.max(peakAnonKb, statusKb('RssAnon'));
  peakFileKb = Math.max(peakFileKb, statusKb('RssFile'));
}, 100);

let rows = 0;
let extra: Record<string, unknown> = {};
const started = performance.now();
if (mode === 'csv-parse') {
  const parser = parse({ bom: true, relax_column_count: true });
  parser.on('data', () => rows++);
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) parser.write(chunk);
  await new Promise<void>((resolve) => parser.end(resolve));
  rows -= 1; // the header
} else {
  const dataDir = mkdtempSync(join(tmpdir(), 'affinity-bench-import-'));
  try {
    const config = loadConfig({ AFFINITY_DATA_DIR: dataDir, AFFINITY_LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv);
    const store = new Store(config.store);
    ensureInboxes(dataDir, ['demo']);
    const importId = newImportId();
    const storedName = storedNameFor(importId, 'bench.csv');
    copyFileSync(file, join(inboxDir(dataDir, 'demo', 'processing'), storedName));
    const record = newImportRecord({ importId, environment: 'demo', fileName: 'bench.csv', storedName, source: 'inbox', bytes: statSync(file).size });
    await putImport(store, record);
    const copied = performance.now();
    await runImport(
      { store, catalog: new Catalog(store), environments: config.environments, dataDir, batchRows: config.ingest.imports.batchRows, shouldStop: () => false, log: () => undefined },
      record,
    );
    const done = getImport(store, 'demo', importId)!;
    rows = done.rows;
    extra = { state: done.state, created: done.created, updated: done.updated, deleted: done.deleted, rejected: done.rejected, copy_ms: Math.round(copied - started) };
    await store.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
const ms = performance.now() - started - Number(extra.copy_ms ?? 0);
clearInterval(sampler);
console.log(
  JSON.stringify({
    mode,
    rows,
    ms: Math.round(ms),
    rows_per_sec: Math.round((rows / ms) * 1000),
    vm_hwm_mb: Math.round(statusKb('VmHWM') / 1024),
    peak_anon_mb: Math.round(peakAnonKb / 1024),
    peak_file_mb: Math.round(peakFileKb / 1024),
    ...extra,
  }),
);
