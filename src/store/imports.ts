/**
 * @module store/imports
 * File drops on LMDB: one record per file (where it is, its state, and its progress: rows
 * consumed and what they did), and the rejected rows with their reasons. The importer commits a
 * file's progress in the same transaction as the catalog writes of the rows it covers
 * (Catalog.applyBatch), which is what makes a file apply exactly once across a crash.
 */
import { v7 as uuidv7 } from 'uuid';
import type { Store } from './open.ts';
import { transactionRetried } from './commit.ts';

/** `json` covers both an array and one object per line (told apart by the first character). */
export type ImportFormat = 'csv' | 'json' | 'xml';
/** `receiving`: an upload still arriving (no 202 yet); the importer leaves it alone. */
export type ImportState = 'receiving' | 'queued' | 'processing' | 'done' | 'failed';

export interface ImportRecord {
  importId: string;
  environment: string;
  /** The file's name as dropped, or `upload.<ext>` for an upload. */
  fileName: string;
  /** Its name in processing/, then done/ or failed/: `<importId>--<fileName>`. */
  storedName: string;
  /** Undefined when the name or media type names no supported format (the import fails). */
  format?: ImportFormat;
  gzip: boolean;
  source: 'inbox' | 'upload';
  state: ImportState;
  bytes: number;
  receivedAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Rows consumed so far (applied, unchanged or rejected): where a restart resumes. */
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
  rejected: number;
  /** Why the file could not be read to its end, and where. */
  error?: string;
  errorLine?: number;
  /** The file and its report are in done/ or failed/. */
  settled: boolean;
}

/** A new import id, time-ordered (UUIDv7) so ids sort in arrival order. */
export function newImportId(): string {
  return `imp_${uuidv7().replaceAll('-', '')}`;
}

const KEY_END = '\uffff';

export function getImport(store: Store, environment: string, importId: string): ImportRecord | undefined {
  if (importId.length > 256) return undefined;
  return store.imports.get([environment, importId]) as ImportRecord | undefined;
}

/** Writes a record (new or changed); resolves once committed. */
export function putImport(store: Store, record: ImportRecord): Promise<boolean> {
  return store.imports.put([record.environment, record.importId], record);
}

/** The newest imports of an environment first, at most `limit`. */
export function listImports(store: Store, environment: string, limit: number): ImportRecord[] {
  const range = store.imports.getRange({ start: [environment, KEY_END], end: [environment], reverse: true, limit });
  return [...range].map(({ value }) => value as ImportRecord);
}

/** Imports with work left (to run, to resume, or to move to done/failed), oldest first. */
export function unfinishedImports(store: Store): ImportRecord[] {
  const out: ImportRecord[] = [];
  for (const { value } of store.imports.getRange()) {
    const record = value as ImportRecord;
    if (!record.settled) out.push(record);
  }
  return out.sort((a, b) => (a.importId < b.importId ? -1 : a.importId > b.importId ? 1 : 0));
}

/** A rejected row: its position among the file's rows (1-based), the line it starts on, and why. */
export interface RejectedRow {
  row: number;
  line: number;
  reason: string;
}

/** Removes the records of uploads that never completed (the process stopped while receiving). */
export function removeInterruptedUploads(store: Store): Promise<number> {
  return transactionRetried(store.root, () => {
    let removed = 0;
    for (const { key, value } of store.imports.getRange()) {
      if ((value as ImportRecord).state !== 'receiving') continue;
      store.imports.remove(key);
      removed++;
    }
    return removed;
  });
}

/** Removes a record (an upload that failed before its 202). */
export function removeImport(store: Store, environment: string, importId: string): Promise<boolean> {
  return store.imports.remove([environment, importId]);
}

/** Rejected rows of an import in file order, after row `afterRow`, at most `limit`. */
export function rejectedRows(store: Store, environment: string, importId: string, afterRow: number, limit: number): RejectedRow[] {
  const range = store.importRejects.getRange({ start: [environment, importId, afterRow + 1], end: [environment, importId, Number.MAX_SAFE_INTEGER], limit });
  return [...range].map(({ key, value }) => ({ row: (key as [string, string, number])[2], ...(value as { line: number; reason: string }) }));
}

/** Records rejected rows; call inside the transaction that advances the import's progress. */
export function putRejectedRows(store: Store, environment: string, importId: string, rows: readonly RejectedRow[]): void {
  for (const { row, line, reason } of rows) store.importRejects.put([environment, importId, row], { line, reason });
}
