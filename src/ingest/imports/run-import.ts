/**
 * @module ingest/imports/run-import
 * Applies one file drop exactly once. The file streams through its format's reader; rows are
 * validated and written `batchRows` at a time with Catalog.applyBatch, whose transaction also
 * commits the import's progress (rows consumed, counters) and the batch's rejected rows. After a
 * crash the file is read again from the start and the rows already consumed are skipped
 * unparsed into writes, so nothing is applied twice and nothing is lost. When the file is read
 * to its end it is `done`; when it cannot be (syntax, I/O) it is `failed` with the error's line,
 * the rows before it staying applied. Then the report is written and the file moved beside it.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Config } from '../../config/types.ts';
import type { Catalog, CatalogWrite } from '../../store/catalog.ts';
import { putImport, putRejectedRows, type ImportRecord, type RejectedRow } from '../../store/imports.ts';
import type { Store } from '../../store/open.ts';
import type { LogFn } from '../log.ts';
import { inboxDir, moveFile } from './inbox.ts';
import { readCsv } from './read-csv.ts';
import { readJson } from './read-json.ts';
import { readXml } from './read-xml.ts';
import { rowToWrite } from './rows.ts';
import { writeReport } from './report.ts';
import { ImportFileError, type SourceRow } from './source-row.ts';

export interface ImportDeps {
  store: Store;
  catalog: Catalog;
  environments: Config['environments'];
  dataDir: string;
  batchRows: number;
  /** Checked between batches: true makes the import stop there (it resumes at the next start). */
  shouldStop: () => boolean;
  log: LogFn;
}

function rowsOf(record: ImportRecord, input: Readable): AsyncGenerator<SourceRow[]> {
  if (record.format === 'csv') return readCsv(input);
  if (record.format === 'xml') return readXml(input);
  return readJson(input);
}

/**
 * The import's progress as committed. `record` is replaced only inside transaction callbacks,
 * which lmdb-js runs in submission order, so each batch's transaction builds on the previous.
 */
interface Progress {
  record: ImportRecord;
  /** Rows handed to transactions so far (committed or in flight). */
  queued: number;
}

/**
 * Submits one batch of rows with the import's progress in one transaction; resolves once it is
 * committed. Validation runs before the transaction; UPDATE merges run inside it.
 */
function commitBatch(deps: ImportDeps, progress: Progress, batch: readonly SourceRow[]): Promise<unknown> {
  const { environment, importId } = progress.record;
  const itemTypes = deps.environments[environment]?.itemTypes ?? [];
  const firstRow = progress.queued + 1;
  progress.queued += batch.length;
  const writes: CatalogWrite[] = [];
  const writeRows: number[] = [];
  const rejects: RejectedRow[] = [];
  for (let k = 0; k < batch.length; k++) {
    const row = batch[k]!;
    if (row.fields === undefined) {
      rejects.push({ row: firstRow + k, line: row.line, reason: row.error ?? 'unreadable' });
      continue;
    }
    const write = rowToWrite(row.fields, environment, itemTypes);
    if ('reason' in write) rejects.push({ row: firstRow + k, line: row.line, reason: write.reason });
    else {
      writes.push(write);
      writeRows.push(k);
    }
  }
  return deps.catalog.applyBatch(writes, (results) => {
    const next: ImportRecord = { ...progress.record, rows: progress.record.rows + batch.length };
    for (let j = 0; j < results.length; j++) {
      const r = results[j]!;
      if (r.op === 'create') next.created++;
      else if (r.op === 'update') next.updated++;
      else if (r.op === 'unchanged') next.unchanged++;
      else if (r.op === 'delete') next.deleted++;
      else {
        const k = writeRows[j]!;
        rejects.push({ row: firstRow + k, line: batch[k]!.line, reason: r.reason ?? 'rejected' });
      }
    }
    next.rejected += rejects.length;
    putRejectedRows(deps.store, environment, importId, rejects);
    void putImport(deps.store, next); // inside the transaction: written at once, committed with it
    progress.record = next;
  });
}

/**
 * Reads and applies the file from where its progress says; returns the record as committed.
 * One batch commits while the next is read and validated (the commit waits for the disk).
 */
async function apply(deps: ImportDeps, start: ImportRecord): Promise<{ record: ImportRecord; stopped: boolean }> {
  const progress: Progress = { record: start, queued: start.rows };
  const path = join(inboxDir(deps.dataDir, start.environment, 'processing'), start.storedName);
  const skip = start.rows;
  let seen = 0;
  let batch: SourceRow[] = [];
  let inFlight: Promise<unknown> | undefined;
  const submit = async () => {
    const previous = inFlight;
    inFlight = commitBatch(deps, progress, batch);
    batch = [];
    await previous;
  };
  const file = createReadStream(path, { highWaterMark: 256 * 1024 });
  const input: Readable = start.gzip ? file.pipe(createGunzip()) : file;
  // A read error of the file is also one of the gunzip stream (pipe does not forward it).
  if (start.gzip) file.once('error', (err) => input.destroy(err));
  try {
    for await (const rows of rowsOf(start, input)) {
      for (let i = 0; i < rows.length; i++) {
        if (++seen <= skip) continue; // committed before a restart
        batch.push(rows[i]!);
        if (batch.length < deps.batchRows) continue;
        await submit();
        if (deps.shouldStop()) {
          await inFlight;
          return { record: progress.record, stopped: true };
        }
      }
    }
    if (batch.length > 0) await submit();
    await inFlight;
  } catch (err) {
    // Rows read before the failure are valid: they are applied, then the file fails at its line.
    if (batch.length > 0) await submit();
    await inFlight;
    const failed: ImportRecord = { ...progress.record, state: 'failed', finishedAt: new Date().toISOString() };
    if (err instanceof ImportFileError) {
      failed.error = err.message;
      if (err.line !== undefined) failed.errorLine = err.line;
    } else {
      const code = (err as NodeJS.ErrnoException).code;
      failed.error = `the file could not be read: ${(err as Error).message}${code ? ` (${code})` : ''}`;
    }
    await putImport(deps.store, failed);
    return { record: failed, stopped: false };
  } finally {
    file.destroy();
  }
  const done: ImportRecord = { ...progress.record, state: 'done', finishedAt: new Date().toISOString() };
  await putImport(deps.store, done);
  return { record: done, stopped: false };
}

/** Writes the report and moves the file to done/ or failed/; idempotent across a crash. */
async function settle(deps: ImportDeps, record: ImportRecord): Promise<ImportRecord> {
  const folder = record.state === 'done' ? 'done' : 'failed';
  const dest = inboxDir(deps.dataDir, record.environment, folder);
  await writeReport(deps.store, record, join(dest, `${record.storedName}.report.json`));
  moveFile(join(inboxDir(deps.dataDir, record.environment, 'processing'), record.storedName), join(dest, record.storedName));
  const settled: ImportRecord = { ...record, settled: true };
  await putImport(deps.store, settled);
  return settled;
}

/**
 * Runs an unfinished import to its end (or to a stop request, returning 'stopped'): applies what
 * is left of the file, then settles it.
 */
export async function runImport(deps: ImportDeps, start: ImportRecord): Promise<'settled' | 'stopped'> {
  let record = start;
  if (record.state === 'queued' || record.state === 'processing') {
    if (record.format === undefined) {
      record = { ...record, state: 'failed', error: `'${record.fileName}' is not a supported format (.csv, .json, .ndjson, .jsonl, .xml, optionally .gz)`, finishedAt: new Date().toISOString() };
    } else if (!Object.hasOwn(deps.environments, record.environment)) {
      record = { ...record, state: 'failed', error: `environment '${record.environment}' is no longer configured`, finishedAt: new Date().toISOString() };
    } else {
      if (record.state === 'queued') {
        record = { ...record, state: 'processing', startedAt: new Date().toISOString() };
        await putImport(deps.store, record);
      }
      deps.log('info', { environment: record.environment, import_id: record.importId, file: record.fileName, resume_at_row: record.rows }, 'import started');
      const result = await apply(deps, record);
      record = result.record;
      if (result.stopped) {
        deps.log('info', { environment: record.environment, import_id: record.importId, rows: record.rows }, 'import paused for shutdown (resumes at the next start)');
        return 'stopped';
      }
    }
    await putImport(deps.store, record);
    const summary = { environment: record.environment, import_id: record.importId, file: record.fileName, state: record.state, rows: record.rows, rejected: record.rejected, error: record.error };
    deps.log(record.state === 'done' ? 'info' : 'warn', summary, record.state === 'done' ? 'import done' : 'import failed');
  }
  await settle(deps, record);
  return 'settled';
}
