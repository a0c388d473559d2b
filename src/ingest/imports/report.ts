/**
 * @module ingest/imports/report
 * The import's wire summary (snake_case, as the imports endpoint and the report file show it)
 * and the report file written beside a finished file: the summary plus every rejected row
 * (row, line, reason), streamed from LMDB page by page and renamed into place whole.
 */
import { createWriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { once } from 'node:events';
import { rejectedRows, type ImportRecord } from '../../store/imports.ts';
import type { Store } from '../../store/open.ts';

/** The import as the API and the report show it. */
export function importSummary(record: ImportRecord): Record<string, unknown> {
  return {
    import_id: record.importId,
    environment: record.environment,
    file: record.fileName,
    format: record.format ?? null,
    source: record.source,
    state: record.state,
    bytes: record.bytes,
    received_at: record.receivedAt,
    started_at: record.startedAt ?? null,
    finished_at: record.finishedAt ?? null,
    rows: record.rows,
    created: record.created,
    updated: record.updated,
    unchanged: record.unchanged,
    deleted: record.deleted,
    rejected: record.rejected,
    error: record.error ?? null,
    error_line: record.errorLine ?? null,
  };
}

const PAGE = 10_000;

/** Writes the report of a finished import to `path` (through `path.tmp`, then a rename). */
export async function writeReport(store: Store, record: ImportRecord, path: string): Promise<void> {
  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const summary = JSON.stringify(importSummary(record), null, 2);
  await write(`${summary.slice(0, -2)},\n  "rejected_rows": [`);
  let after = 0;
  let first = true;
  for (;;) {
    const page = rejectedRows(store, record.environment, record.importId, after, PAGE);
    if (page.length === 0) break;
    const lead = first;
    first = false;
    await write(page.map((r, i) => `${lead && i === 0 ? '' : ','}\n    ${JSON.stringify(r)}`).join(''));
    after = page[page.length - 1]!.row;
  }
  await write(first ? ']\n}\n' : '\n  ]\n}\n');
  out.end();
  await once(out, 'finish');
  await rename(tmp, path);
}
