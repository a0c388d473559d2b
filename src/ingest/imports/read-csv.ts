/**
 * @module ingest/imports/read-csv
 * Streams a CSV file drop into rows with csv-parse: a header row naming Item fields and
 * `operation` (checked up front: an unknown column fails the file before anything is applied),
 * then one row per record. Nested fields (categories, tags, images, flags, item_attributes) are
 * JSON strings (SPEC.md); empty cells are absent fields. A record with the wrong number of fields
 * is a rejected row; a quoting error fails the file at its line (the records after it cannot be
 * trusted).
 */
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { MAPPABLE_FIELDS } from '../../domain/feed.ts';
import { ImportFileError, MAX_ROW_CHARS, type SourceRow } from './source-row.ts';

/** Item fields a column may name: the mappable ones plus the two a feed supplies itself. */
export const ITEM_COLUMNS: readonly string[] = ['environment', 'item_type', ...MAPPABLE_FIELDS];

const NESTED = new Set(['categories', 'tags', 'images', 'flags', 'item_attributes']);

function checkHeader(header: string[]): void {
  const seen = new Set<string>();
  for (const column of header) {
    if (column !== 'operation' && !ITEM_COLUMNS.includes(column)) {
      throw new ImportFileError(`column '${column}' is not an Item field or 'operation'`, 1);
    }
    if (seen.has(column)) throw new ImportFileError(`column '${column}' appears twice`, 1);
    seen.add(column);
  }
  for (const required of ['operation', 'item_type', 'item_id']) {
    if (!seen.has(required)) throw new ImportFileError(`the header has no '${required}' column`, 1);
  }
}

function newlines(field: string): number {
  let n = 0;
  for (let i = field.indexOf('\n'); i !== -1; i = field.indexOf('\n', i + 1)) n++;
  return n;
}

function toRow(header: string[], record: string[], line: number): SourceRow {
  if (record.length !== header.length) return { line, error: `has ${record.length} fields, the header has ${header.length}` };
  const fields: Record<string, unknown> = {};
  for (let i = 0; i < header.length; i++) {
    const cell = record[i]!;
    if (cell === '') continue;
    const column = header[i]!;
    if (!NESTED.has(column)) {
      fields[column] = cell;
      continue;
    }
    try {
      fields[column] = JSON.parse(cell) as unknown;
    } catch {
      return { line, error: `${column} is not a JSON value (nested fields are JSON strings in CSV)` };
    }
  }
  return { line, fields };
}

/** Rows of a CSV stream, in file order; throws ImportFileError where the file cannot be read on. */
export async function* readCsv(input: Readable): AsyncGenerator<SourceRow[]> {
  let header: string[] | undefined;
  let rows: SourceRow[] = [];
  let failure: ImportFileError | undefined;
  /** The line the next record starts on: csv-parse's own line info costs a third of its speed. */
  let line = 1;
  const parser = parse({ bom: true, relax_column_count: true, max_record_size: MAX_ROW_CHARS });
  // 'data' is emitted synchronously within write() (the stream flows): rows keep file order
  // with the error, which csv-parse reports after the records before it.
  parser.on('data', (record: string[]) => {
    let spanned = 0;
    for (let i = 0; i < record.length; i++) spanned += newlines(record[i]!);
    const start = line;
    line += 1 + spanned;
    if (failure) return;
    if (record.length === 1 && record[0] === '') return; // an empty line
    if (header === undefined) {
      header = record.map((c) => c.trim());
      try {
        checkHeader(header);
      } catch (err) {
        failure = err as ImportFileError;
      }
      return;
    }
    rows.push(toRow(header, record, start));
  });
  parser.on('error', (err: Error) => {
    // Every record before the error was delivered: the failing one starts at `line` (csv-parse's
    // own count differs when quoted fields hold CRLF).
    failure ??= new ImportFileError(`CSV syntax: ${err.message.replace(/ at line \d+/, '')}`, line);
  });
  const take = () => {
    const out = rows;
    rows = [];
    return out;
  };
  for await (const chunk of input) {
    parser.write(chunk as Buffer);
    // Rows before a failure are handed over first: they are valid and get applied.
    if (rows.length > 0) yield take();
    if (failure) throw failure;
  }
  if (!failure && !parser.destroyed) {
    await new Promise<void>((resolve) => {
      parser.once('end', resolve);
      parser.once('error', () => resolve());
      parser.end();
    });
  }
  if (rows.length > 0) yield take();
  if (failure) throw failure;
  if (header === undefined) throw new ImportFileError('the file is empty (no header row)', 1);
}
