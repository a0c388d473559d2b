/**
 * @module ingest/imports/inbox
 * The file-drop folders of an environment (DESIGN.md): `<dataDir>/inbox/<env>/` receives files
 * (from SFTP, a bucket sync, or the upload endpoint); a file being applied sits in `processing/`,
 * then moves to `done/` or `failed/` beside its report; uploads are written to `.uploads/` and
 * moved in whole. Names, formats, the moves, and the record of a file that has just arrived;
 * no catalog work.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { ImportFormat, ImportRecord } from '../../store/imports.ts';

export type InboxFolder = 'processing' | 'done' | 'failed' | '.uploads';

export function inboxDir(dataDir: string, environment: string, folder?: InboxFolder): string {
  const root = join(dataDir, 'inbox', environment);
  return folder ? join(root, folder) : root;
}

/** Creates every environment's inbox folders. */
export function ensureInboxes(dataDir: string, environments: readonly string[]): void {
  for (const environment of environments) {
    for (const folder of ['processing', 'done', 'failed', '.uploads'] as const) mkdirSync(inboxDir(dataDir, environment, folder), { recursive: true });
  }
}

const FORMATS: Record<string, ImportFormat> = { '.csv': 'csv', '.json': 'json', '.ndjson': 'json', '.jsonl': 'json', '.xml': 'xml' };

/** The format a file name says (`.csv`, `.json`, `.ndjson`, `.jsonl`, `.xml`, each optionally `.gz`). */
export function formatOfName(name: string): { format?: ImportFormat; gzip: boolean } {
  const lower = name.toLowerCase();
  const gzip = lower.endsWith('.gz');
  const format = FORMATS[extname(gzip ? lower.slice(0, -3) : lower)];
  return format ? { format, gzip } : { gzip };
}

/** Media types the upload endpoint takes, and the file extension each is stored under. */
export const UPLOAD_TYPES: Record<string, { format: ImportFormat; extension: string }> = {
  'text/csv': { format: 'csv', extension: '.csv' },
  'application/json': { format: 'json', extension: '.json' },
  'application/x-ndjson': { format: 'json', extension: '.ndjson' },
  'application/xml': { format: 'xml', extension: '.xml' },
  'text/xml': { format: 'xml', extension: '.xml' },
};

/** Names a sync tool uses while still writing, and hidden files: never taken. */
const IN_PROGRESS = /^\.|\.(tmp|part|partial|filepart|crdownload|swp)$|~$/i;

/** Regular files at the top of an environment's inbox that may be taken, with size and time. */
export function listDropped(dataDir: string, environment: string): Array<{ name: string; size: number; mtimeMs: number }> {
  const dir = inboxDir(dataDir, environment);
  const out: Array<{ name: string; size: number; mtimeMs: number }> = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile() || IN_PROGRESS.test(entry.name)) continue;
    try {
      const stat = statSync(join(dir, entry.name));
      out.push({ name: entry.name, size: stat.size, mtimeMs: stat.mtimeMs });
    } catch {
      // gone since the listing (taken by another tool): skip
    }
  }
  return out;
}

/** The file's name in processing/, done/ and failed/: the import id, `--`, the name (cut to fit 255 bytes). */
export function storedNameFor(importId: string, fileName: string): string {
  const prefix = `${importId}--`;
  let name = fileName;
  while (Buffer.byteLength(prefix + name) > 240) name = name.slice(1);
  return prefix + name;
}

/** The import id and original name in a stored name; undefined when it is not one. */
export function parseStoredName(storedName: string): { importId: string; fileName: string } | undefined {
  const match = /^(imp_[0-9a-f]{32})--(.+)$/.exec(storedName);
  return match ? { importId: match[1]!, fileName: match[2]! } : undefined;
}

/**
 * Moves a file between folders. Idempotent: a file already at its destination (a crash after the
 * move, before it was recorded) counts as moved; resolves false when it is in neither place.
 */
export function moveFile(from: string, to: string): boolean {
  try {
    renameSync(from, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    try {
      statSync(to);
      return true;
    } catch {
      return false;
    }
  }
}

/** Removes whatever partial uploads a stopped process left (their clients never got a 202). */
export function clearUploads(dataDir: string, environment: string): void {
  const dir = inboxDir(dataDir, environment, '.uploads');
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { force: true });
}

/** A new record for a file now in processing/. */
export function newImportRecord(fields: Pick<ImportRecord, 'importId' | 'environment' | 'fileName' | 'storedName' | 'source' | 'bytes'> & { state?: ImportRecord['state'] }): ImportRecord {
  const { format, gzip } = formatOfName(fields.fileName);
  const record: ImportRecord = {
    ...fields,
    state: fields.state ?? 'queued',
    gzip,
    receivedAt: new Date().toISOString(),
    rows: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    deleted: 0,
    rejected: 0,
    settled: false,
  };
  if (format) record.format = format;
  return record;
}
