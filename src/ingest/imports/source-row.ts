/**
 * @module ingest/imports/source-row
 * What the file readers (CSV, JSON, XML) hand to the importer: rows with their line, either as
 * fields (the Item fields and `operation`, not yet validated) or as the reason the row could
 * not be read; and the error for a file that cannot be read on (rows before it stay applied).
 */

export interface SourceRow {
  /** 1-based line of the file where the row starts. */
  line: number;
  fields?: Record<string, unknown>;
  /** Why the row could not be read (it is reported, the file goes on). */
  error?: string;
}

/** The file cannot be read past this point: the import fails here. */
export class ImportFileError extends Error {
  readonly line: number | undefined;
  constructor(message: string, line?: number) {
    super(message);
    this.name = 'ImportFileError';
    this.line = line;
  }
}

/** Rows handed over at once: the readers yield arrays, not single rows, to keep per-row overhead low. */
export const ROWS_PER_YIELD = 512;

/** One row (JSON value, CSV record, XML entry) longer than this fails the file: it cannot be a catalog item. */
export const MAX_ROW_CHARS = 16 * 1024 * 1024;
