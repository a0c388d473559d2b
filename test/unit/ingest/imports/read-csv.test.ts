import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { readCsv } from '../../../../src/ingest/imports/read-csv.ts';
import type { SourceRow } from '../../../../src/ingest/imports/source-row.ts';

async function read(text: string, size = 5): Promise<{ rows: SourceRow[]; error?: string; line?: number }> {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const rows: SourceRow[] = [];
  try {
    for await (const batch of readCsv(Readable.from(chunks))) rows.push(...batch);
    return { rows };
  } catch (err) {
    return { rows, error: (err as Error).message, line: (err as { line?: number }).line };
  }
}

test('rows carry the line they start on (quoted line breaks, CRLF, blank lines) and JSON nested fields', async () => {
  const text = 'operation,item_id,item_type,title,tags\r\nADD,a,article,"two\r\nlines",\r\n\r\nADD,b,article,,"[""t""]"\r\nADD,c\r\nADD,d,article,x,nope\r\n';
  for (const size of [1, 5, 1000]) {
    assert.deepEqual(await read(text, size), {
      rows: [
        { line: 2, fields: { operation: 'ADD', item_id: 'a', item_type: 'article', title: 'two\r\nlines' } },
        { line: 5, fields: { operation: 'ADD', item_id: 'b', item_type: 'article', tags: ['t'] } },
        { line: 6, error: 'has 2 fields, the header has 5' },
        { line: 7, error: 'tags is not a JSON value (nested fields are JSON strings in CSV)' },
      ],
    });
  }
});

test('a header naming no Item field, lacking operation, or empty fails the file at line 1', async () => {
  assert.deepEqual(await read('operation,item_id,item_type,titel\nADD,a,article,x\n'), { rows: [], error: "column 'titel' is not an Item field or 'operation'", line: 1 });
  assert.equal((await read('item_id,item_type\na,article\n')).error, "the header has no 'operation' column");
  assert.equal((await read('operation,item_id,item_type,item_id\n')).error, "column 'item_id' appears twice");
  assert.equal((await read('')).error, 'the file is empty (no header row)');
});

test('a quoting error fails the file at the line of its record, after the rows before it', async () => {
  const result = await read('operation,item_id,item_type\nADD,a,article\nADD,"b"x,article\nADD,c,article\n');
  assert.deepEqual(result.rows, [{ line: 2, fields: { operation: 'ADD', item_id: 'a', item_type: 'article' } }]);
  assert.equal(result.line, 3);
  assert.match(result.error!, /^CSV syntax: Invalid Closing Quote/);
});
