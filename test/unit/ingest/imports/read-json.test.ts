import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { readJson } from '../../../../src/ingest/imports/read-json.ts';
import type { SourceRow } from '../../../../src/ingest/imports/source-row.ts';

/** Reads `text` split into chunks of `size` bytes (multi-byte characters split too). */
async function read(text: string, size = 3): Promise<{ rows: SourceRow[]; error?: string; line?: number }> {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const rows: SourceRow[] = [];
  try {
    for await (const batch of readJson(Readable.from(chunks))) rows.push(...batch);
    return { rows };
  } catch (err) {
    return { rows, error: (err as Error).message, line: (err as { line?: number }).line };
  }
}

test('an array is split into its elements whatever the chunking, with the line each starts on', async () => {
  const text = '\ufeff[\n {"a":"x,]}\\"é"},\n {"b":[1,{"c":2}]}, 5, {bad}\n]\n';
  for (const size of [1, 2, 7, 1000]) {
    assert.deepEqual(await read(text, size), {
      rows: [
        { line: 2, fields: { a: 'x,]}"é' } },
        { line: 3, fields: { b: [1, { c: 2 }] } },
        { line: 3, error: 'is not a JSON object' },
        { line: 3, error: "not valid JSON: Expected property name or '}' in JSON at position 1" },
      ],
    });
  }
});

test('one object per line: blank lines skipped, a bad line rejected, the rest read', async () => {
  assert.deepEqual(await read('{"a":1}\n\n{"a":\n{"a":3}'), {
    rows: [{ line: 1, fields: { a: 1 } }, { line: 3, error: 'not valid JSON: Unexpected end of JSON input' }, { line: 4, fields: { a: 3 } }],
  });
});

test('a broken array fails at its line after handing over the rows before it', async () => {
  assert.deepEqual(await read('[{"a":1},\n{"a":2}\n{"a":3}]'), { rows: [{ line: 1, fields: { a: 1 } }, { line: 2, fields: { a: 2 } }], error: "expected , or ] between array elements, got '{'", line: 3 });
  assert.equal((await read('[{"a":1},]')).error, 'a comma before ] (trailing comma)');
  assert.equal((await read('[{"a":"open')).error, 'the file ends inside the array (truncated?)');
  assert.equal((await read('  ')).error, 'the file is empty');
  assert.equal((await read('"text"')).error, 'a JSON file must be an array ([) or one object per line ({)');
});
