// A file drop as served (issue 12's CSV target): the built service as `npm start` runs it, with a
// fresh data directory, pinned to core 0 (all its threads: HTTP, the ingest worker, the ranking
// workers that apply every catalog change, the model builder); the file POSTed to
// /api/demo/imports by curl pinned to core 1; the import polled until done. Rows/s from the 202 to
// `done`; then until the model builder's copy of the item layout has caught up with the change
// feed (/health model_builder.catalog: it runs at a low priority and finishes after the import).
// The service's RssAnon and RssFile sampled every 100 ms over all of it; CPU per row by thread
// over the import alone and with the builder's catch-up. Then the service restarts on the imported data and its
// RssAnon once ready is what a catalog of that size keeps resident. Used by ingest.bench.ts.
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { getToken } from '../test/helpers/auth.ts';
import { startServer } from '../test/helpers/server.ts';
import { cpuPerRequest, LOAD_CORE, PIN, procStatusKb, SERVER_CORE, threadTicks } from './wrk-runner.ts';

export interface ServedImport {
  rows: number;
  state: string;
  rejected: number;
  uploadSec: number;
  importSec: number;
  rowsPerSec: number;
  /** From `done` until the builder's item layout covered every change. */
  layoutCatchUpSec: number;
  /** Peak RssAnon of the service from before the upload until the builder caught up, MB. */
  peakAnonMb: number;
  peakFileMb: number;
  /** RssAnon before the upload (a fresh, empty service), MB. */
  idleAnonMb: number;
  /** RssAnon of the service restarted on the imported data, once ready, MB. */
  restartedAnonMb: number;
  /** CPU µs per row by thread, upload and import. */
  cpuUsPerRow: Record<string, number>;
  /** The same to the builder's catch-up. */
  cpuUsPerRowCaughtUp: Record<string, number>;
}

/** A /proc status field of `pid` in MB (0 once the process is gone). */
const statusMb = (pid: number, field: string) => Math.round((procStatusKb(pid, field)[field] ?? 0) / 1024);

function pin(pid: number): void {
  if (PIN) spawnSync('taskset', ['-a', '-p', '-c', SERVER_CORE, String(pid)]);
}

export interface ImportRecord {
  state: string;
  rows: number;
  rejected: number;
}

/** Polls an import (POST /api/demo/imports) until it is done or failed; returns its record. */
export async function importFinished(url: string, auth: { Authorization: string }, importId: string): Promise<ImportRecord> {
  for (;;) {
    const record = (await (await fetch(`${url}/api/demo/imports/${importId}?rejected_limit=1`, { headers: auth })).json()) as ImportRecord;
    if (record.state === 'done' || record.state === 'failed') return record;
    await sleep(100);
  }
}

/** Waits until the model builder's item layout covers the whole change feed (/health), at most `timeoutMs`. */
export async function layoutCaughtUp(url: string, timeoutMs: number): Promise<void> {
  for (const start = performance.now(); ; await sleep(100)) {
    const health = (await (await fetch(`${url}/health`)).json()) as { model_builder: { catalog: { lag_changes: number } } | null };
    if (health.model_builder?.catalog.lag_changes === 0) return;
    if (performance.now() - start > timeoutMs) throw new Error(`the builder did not catch up with the catalog in ${timeoutMs / 1000} s`);
  }
}

export async function servedImport(csvFile: string): Promise<ServedImport> {
  const server = await startServer();
  try {
    const pid = server.proc.pid!;
    pin(pid);
    const token = await getToken(server);
    const auth = { Authorization: `Bearer ${token}` };
    await sleep(1000);
    const idleAnonMb = statusMb(pid, 'RssAnon');
    let [peakAnonMb, peakFileMb] = [idleAnonMb, statusMb(pid, 'RssFile')];
    const sample = () => {
      peakAnonMb = Math.max(peakAnonMb, statusMb(pid, 'RssAnon'));
      peakFileMb = Math.max(peakFileMb, statusMb(pid, 'RssFile'));
    };
    const sampler = setInterval(sample, 100);
    const cpuStart = threadTicks(pid);
    const start = performance.now();
    const curl = ['curl', '-sS', '-X', 'POST', '-H', `Authorization: ${auth.Authorization}`, '-H', 'Content-Type: text/csv', '--data-binary', `@${csvFile}`, `${server.url}/api/demo/imports`];
    const up = PIN ? spawnSync('taskset', ['-c', LOAD_CORE, ...curl], { encoding: 'utf8' }) : spawnSync(curl[0]!, curl.slice(1), { encoding: 'utf8' });
    const accepted = performance.now();
    const importId = (JSON.parse(up.stdout || '{}') as { import_id?: string }).import_id;
    if (up.status !== 0 || !importId) throw new Error(`upload failed (${up.status}): ${up.stdout} ${up.stderr}`);
    const record = await importFinished(server.url, auth, importId);
    const done = performance.now();
    const cpuUsPerRow = cpuPerRequest(cpuStart, threadTicks(pid), record.rows);
    await layoutCaughtUp(server.url, 300_000);
    const caughtUp = performance.now();
    const cpuUsPerRowCaughtUp = cpuPerRequest(cpuStart, threadTicks(pid), record.rows);
    clearInterval(sampler);
    sample();
    await server.stop();
    const again = await startServer({ dataDir: server.dataDir });
    try {
      await sleep(2000);
      const restartedAnonMb = statusMb(again.proc.pid!, 'RssAnon');
      const importSec = (done - accepted) / 1000;
      return {
        rows: record.rows,
        state: record.state,
        rejected: record.rejected,
        uploadSec: (accepted - start) / 1000,
        importSec,
        layoutCatchUpSec: (caughtUp - done) / 1000,
        rowsPerSec: Math.round(record.rows / importSec),
        peakAnonMb,
        peakFileMb,
        idleAnonMb,
        restartedAnonMb,
        cpuUsPerRow,
        cpuUsPerRowCaughtUp,
      };
    } finally {
      await again.stop();
    }
  } finally {
    await server.close();
  }
}
