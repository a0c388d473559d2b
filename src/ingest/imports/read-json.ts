/**
 * @module ingest/imports/read-json
 * Streams a JSON file drop into rows, in either documented shape, told apart by the first
 * character: an array of objects (`[`), or one object per line (`{`, NDJSON). The array is split
 * into its elements by a small scanner that tracks strings and nesting, so a file of any size is
 * never parsed whole; each element is then parsed alone, so a bad element is a rejected row and
 * the rest of the file still applies. A break in the array's own structure (a missing comma, an
 * unterminated string) fails the file at its line. Input is UTF-8 (a BOM is skipped).
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { ImportFileError, MAX_ROW_CHARS, ROWS_PER_YIELD, type SourceRow } from './source-row.ts';

function toRow(text: string, line: number): SourceRow {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { line, error: `not valid JSON: ${(err as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { line, error: 'is not a JSON object' };
  return { line, fields: value as Record<string, unknown> };
}

const enum Phase {
  Start,
  First,
  Value,
  In,
  After,
  End,
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Splits a JSON array arriving in chunks into its element texts. */
class ArraySplitter {
  phase = Phase.Start;
  line = 1;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #valueLine = 0;
  #pending: string[] = [];
  #pendingChars = 0;

  /** Feeds a chunk; pushes each completed element to `out`. */
  feed(s: string, out: SourceRow[]): void {
    let start = this.phase === Phase.In ? 0 : -1;
    let i = 0;
    const finish = (end: number) => {
      this.#pending.push(s.slice(start, end));
      out.push(toRow(this.#pending.join(''), this.#valueLine));
      this.#pending = [];
      this.#pendingChars = 0;
      this.phase = Phase.After;
      start = -1;
    };
    while (i < s.length) {
      const c = s.charCodeAt(i);
      switch (this.phase) {
        case Phase.Start:
          if (isSpace(c)) break;
          if (c !== 0x5b) throw new ImportFileError('a JSON file must be an array ([) or one object per line ({)', this.line);
          this.phase = Phase.First;
          break;
        case Phase.First:
        case Phase.Value:
          if (isSpace(c)) break;
          if (c === 0x5d) {
            if (this.phase === Phase.Value) throw new ImportFileError('a comma before ] (trailing comma)', this.line);
            this.phase = Phase.End;
            break;
          }
          this.phase = Phase.In;
          this.#depth = 0;
          this.#inString = false;
          this.#escaped = false;
          this.#valueLine = this.line;
          start = i;
          continue; // the same character starts the value
        case Phase.In:
          if (this.#inString) {
            if (this.#escaped) this.#escaped = false;
            else if (c === 0x5c) this.#escaped = true;
            else if (c === 0x22) {
              this.#inString = false;
              if (this.#depth === 0) {
                finish(i + 1);
                break;
              }
            }
          } else if (c === 0x22) this.#inString = true;
          else if (c === 0x7b || c === 0x5b) this.#depth++;
          else if (c === 0x7d || c === 0x5d) {
            if (this.#depth === 0) {
              finish(i); // a scalar ended by the array's ]
              continue;
            }
            if (--this.#depth === 0) finish(i + 1);
          } else if (this.#depth === 0 && (c === 0x2c || isSpace(c))) {
            finish(i); // a scalar ended by , or whitespace
            continue;
          }
          break;
        case Phase.After:
          if (isSpace(c)) break;
          if (c === 0x2c) this.phase = Phase.Value;
          else if (c === 0x5d) this.phase = Phase.End;
          else throw new ImportFileError(`expected , or ] between array elements, got '${String.fromCharCode(c)}'`, this.line);
          break;
        case Phase.End:
          if (!isSpace(c)) throw new ImportFileError('text after the end of the array', this.line);
          break;
      }
      if (c === 0x0a) this.line++;
      i++;
    }
    if (this.phase === Phase.In) {
      const rest = s.slice(start);
      this.#pending.push(rest);
      this.#pendingChars += rest.length;
      if (this.#pendingChars > MAX_ROW_CHARS) throw new ImportFileError(`an array element is longer than ${MAX_ROW_CHARS} characters`, this.#valueLine);
    }
  }

  end(out: SourceRow[]): void {
    if (this.phase === Phase.In && this.#depth === 0 && !this.#inString) {
      const text = this.#pending.join('');
      this.#pending = [];
      out.push(toRow(text, this.#valueLine));
      this.phase = Phase.After;
    }
    if (this.phase === Phase.Start) throw new ImportFileError('the file is empty', this.line);
    if (this.phase !== Phase.End) throw new ImportFileError('the file ends inside the array (truncated?)', this.line);
  }
}

/** Splits NDJSON arriving in chunks into one row per non-empty line. */
class LineSplitter {
  line = 1;
  #partial = '';

  feed(s: string, out: SourceRow[]): void {
    let from = 0;
    for (let nl = s.indexOf('\n'); nl !== -1; nl = s.indexOf('\n', from)) {
      const text = this.#partial + s.slice(from, nl);
      this.#partial = '';
      if (text.trim() !== '') out.push(toRow(text, this.line));
      this.line++;
      from = nl + 1;
    }
    this.#partial += s.slice(from);
    if (this.#partial.length > MAX_ROW_CHARS) throw new ImportFileError(`a line is longer than ${MAX_ROW_CHARS} characters`, this.line);
  }

  end(out: SourceRow[]): void {
    if (this.#partial.trim() !== '') out.push(toRow(this.#partial, this.line));
    this.#partial = '';
  }
}

/** Rows of a JSON or NDJSON stream, in file order; throws ImportFileError where it cannot go on. */
export async function* readJson(input: Readable): AsyncGenerator<SourceRow[]> {
  const decoder = new StringDecoder('utf8');
  let splitter: ArraySplitter | LineSplitter | undefined;
  let rows: SourceRow[] = [];
  let first = true;
  const feed = (text: string) => {
    if (first) {
      text = text.replace(/^\ufeff/, '');
      first = text === '';
    }
    if (splitter === undefined) {
      const lead = /\S/.exec(text);
      if (!lead) return;
      splitter = lead[0] === '{' ? new LineSplitter() : new ArraySplitter();
    }
    splitter.feed(text, rows);
  };
  for await (const chunk of input) {
    try {
      feed(decoder.write(chunk as Buffer));
    } catch (err) {
      // Rows completed before the failure are valid and get applied.
      if (rows.length > 0) yield rows;
      throw err;
    }
    if (rows.length >= ROWS_PER_YIELD) {
      yield rows;
      rows = [];
    }
  }
  try {
    feed(decoder.end());
    if (!splitter) throw new ImportFileError('the file is empty', 1);
    splitter.end(rows);
  } catch (err) {
    if (rows.length > 0) yield rows;
    throw err;
  }
  if (rows.length > 0) yield rows;
}
