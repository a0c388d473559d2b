// File drops through the real service: uploads (CSV, JSON array, NDJSON, XML) and files put in
// the inbox folder, applied through the catalog with ADD/UPDATE/DELETE semantics, invalid rows
// reported with their line and reason while valid ones apply, and each file moved to done/ or
// failed/ beside its report.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { apiClient, waitFor, type Api } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { readChanges } from '../helpers/store-snapshot.ts';

interface ImportView {
  import_id: string;
  file: string;
  format: string | null;
  source: string;
  state: string;
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
  rejected: number;
  error: string | null;
  error_line: number | null;
  report_file: string | null;
  rejected_rows: Array<{ row: number; line: number; reason: string }>;
  next_rejected_after: number | null;
}

let server: TestServer;
let api: Api;
let token: string;

before(async () => {
  server = await startServer({ config: { ingest: { imports: { batchRows: 3, scanIntervalMs: 50, settleMs: 200 } } } });
  token = await getToken(server);
  api = apiClient(server, token);
});
after(() => server?.close());

async function upload(body: string | Buffer, contentType: string): Promise<string> {
  const res = await fetch(`${server.url}/api/demo/imports`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': contentType }, body });
  const json = (await res.json()) as ImportView;
  assert.equal(res.status, 202, JSON.stringify(json));
  assert.equal(res.headers.get('location'), `/api/demo/imports/${json.import_id}`);
  assert.equal(json.state, 'queued');
  return json.import_id;
}

async function finished(importId: string, query = ''): Promise<ImportView> {
  return waitFor(`import ${importId}`, async () => {
    const res = await api<ImportView>('GET', `/api/demo/imports/${importId}${query}`);
    assert.equal(res.status, 200, res.text);
    return res.body.report_file !== null ? res.body : undefined;
  });
}

async function getItem(itemType: string, id: string) {
  return api('GET', `/api/demo/items/${itemType}/${encodeURIComponent(id)}`);
}

const inbox = (folder = '') => join(server.dataDir, 'inbox', 'demo', folder);

test('a CSV upload applies ADD, UPDATE and DELETE rows and reports every rejected row with its line', async () => {
  assert.equal((await api('PUT', '/api/demo/items/article/old-1', { environment: 'demo', item_type: 'article', item_id: 'old-1', title: 'Old' })).status, 200);
  const csv = [
    'operation,item_id,item_type,title,categories,tags,item_attributes,publication_datetime',
    'ADD,csv-1,article,First,"[[""news"",""world""],""sport""]","[""a"",""b""]","{""author"":""Ann""}",2024-05-01T10:00:00+02:00',
    'ADD,csv-2,video,"Second, with ""quotes""",,,,',
    'add,csv-3,article,"multi',
    'line title",,,,',
    'UPDATE,csv-1,article,First (updated),,,,',
    'UPDATE,nope,article,X,,,,',
    'DELETE,old-1,article,,,,,',
    'DELETE,old-1,article,,,,,',
    'ADD,csv-4,podcast,Wrong type,,,,',
    'ADD,csv-5,article,Bad time,,,,2024-05-01 10:00',
    'ADD,csv-6,article,Bad tags,,notjson,,',
    'REPLACE,csv-7,article,Bad op,,,,',
    'ADD,csv-8,article,Too few',
    '',
    'ADD,csv-9,article,Last,,,,',
  ].join('\n');
  const importId = await upload(csv, 'text/csv');
  const done = await finished(importId);
  assert.equal(done.state, 'done');
  assert.equal(done.source, 'upload');
  assert.equal(done.format, 'csv');
  assert.equal(done.rows, 13);
  assert.equal(done.created, 4);
  assert.equal(done.updated, 1);
  assert.equal(done.deleted, 1);
  assert.equal(done.rejected, 7);
  assert.deepEqual(
    done.rejected_rows.map((r) => [r.row, r.line]),
    [
      [5, 7],
      [7, 9],
      [8, 10],
      [9, 11],
      [10, 12],
      [11, 13],
      [12, 14],
    ],
  );
  const reasons = done.rejected_rows.map((r) => r.reason);
  assert.match(reasons[0]!, /item 'nope' of type 'article' is not known/);
  assert.match(reasons[1]!, /item 'old-1' of type 'article' is not known/);
  assert.match(reasons[2]!, /item_type 'podcast' is not an item type/);
  assert.match(reasons[3]!, /publication_datetime must be an ISO 8601 timestamp/);
  assert.match(reasons[4]!, /tags is not a JSON value/);
  assert.match(reasons[5]!, /operation 'REPLACE' is not one of ADD, UPDATE, DELETE/);
  assert.match(reasons[6]!, /has 4 fields, the header has 8/);

  assert.deepEqual((await getItem('article', 'csv-1')).body, {
    environment: 'demo',
    item_id: 'csv-1',
    item_type: 'article',
    title: 'First (updated)',
    categories: [['news', 'world'], ['sport']],
    tags: ['a', 'b'],
    item_attributes: { author: 'Ann' },
    publication_datetime: '2024-05-01T10:00:00+02:00',
  });
  assert.equal((await getItem('video', 'csv-2')).body.title, 'Second, with "quotes"');
  assert.equal((await getItem('article', 'csv-3')).body.title, 'multi\nline title');
  assert.equal((await getItem('article', 'old-1')).status, 404);

  const ops = (await readChanges(server.dataDir)).filter((c) => String(c.itemId).startsWith('csv-') || c.itemId === 'old-1');
  assert.deepEqual(
    ops.map((c) => `${c.op} ${c.itemId}`),
    ['create old-1', 'create csv-1', 'create csv-2', 'create csv-3', 'update csv-1', 'delete old-1', 'create csv-9'],
  );

  const stored = `${importId}--upload.csv`;
  assert.equal(done.report_file, join('inbox', 'demo', 'done', `${stored}.report.json`));
  assert.ok(existsSync(inbox(join('done', stored))), 'the file is in done/');
  assert.ok(!existsSync(inbox(join('processing', stored))));
  const report = JSON.parse(readFileSync(join(server.dataDir, done.report_file!), 'utf8')) as ImportView;
  assert.equal(report.import_id, importId);
  assert.equal(report.state, 'done');
  assert.deepEqual(report.rejected_rows, done.rejected_rows);
});

test('rejected rows page with rejected_after and rejected_limit', async () => {
  const csv = ['operation,item_id,item_type', 'ADD,p-1,podcast', 'ADD,p-2,podcast', 'ADD,p-3,podcast'].join('\n');
  const importId = await upload(csv, 'text/csv');
  await finished(importId);
  const first = await api<ImportView>('GET', `/api/demo/imports/${importId}?rejected_limit=2`);
  assert.deepEqual(first.body.rejected_rows.map((r) => r.row), [1, 2]);
  assert.equal(first.body.next_rejected_after, 2);
  const second = await api<ImportView>('GET', `/api/demo/imports/${importId}?rejected_limit=2&rejected_after=2`);
  assert.deepEqual(second.body.rejected_rows.map((r) => r.row), [3]);
  assert.equal(second.body.next_rejected_after, null);
});

const ROWS = [
  { operation: 'ADD', item_id: 'fmt-1', item_type: 'article', title: 'One', categories: [['news', 'world']], tags: ['x'], images: ['https://x/1.jpg', { url: 'https://x/2.jpg' }], item_attributes: { author: 'Ann' } },
  { operation: 'ADD', item_id: 'fmt-2', item_type: 'product', title: 'Two' },
  { operation: 'UPDATE', item_id: 'fmt-2', item_type: 'product', description: 'Second', title: null },
  { operation: 'ADD', item_id: 'fmt-3', item_type: 'article', title: 42 },
];

async function checkFormatResult(importId: string, prefix: string): Promise<void> {
  const done = await finished(importId);
  assert.equal(done.state, 'done', JSON.stringify(done));
  assert.equal(done.created, 2);
  assert.equal(done.updated, 1);
  assert.equal(done.rejected, 1);
  assert.match(done.rejected_rows[0]!.reason, /title must be string/);
  assert.deepEqual((await getItem('article', `${prefix}-1`)).body, {
    environment: 'demo',
    item_id: `${prefix}-1`,
    item_type: 'article',
    title: 'One',
    categories: [['news', 'world']],
    tags: ['x'],
    images: ['https://x/1.jpg', { url: 'https://x/2.jpg' }],
    item_attributes: { author: 'Ann' },
  });
  assert.deepEqual((await getItem('product', `${prefix}-2`)).body, { environment: 'demo', item_id: `${prefix}-2`, item_type: 'product', description: 'Second' });
}

const renamed = (prefix: string) => ROWS.map((r) => ({ ...r, item_id: r.item_id.replace('fmt', prefix) }));

test('a JSON array upload applies like CSV (UPDATE with null removes a field)', async () => {
  const importId = await upload(JSON.stringify(renamed('ja'), null, 2), 'application/json');
  await checkFormatResult(importId, 'ja');
  const done = await finished(importId);
  assert.equal(done.rejected_rows[0]!.line, 39, 'the line where the rejected element starts');
});

test('an NDJSON upload applies like CSV', async () => {
  const importId = await upload(renamed('nd').map((r) => JSON.stringify(r)).join('\n'), 'application/x-ndjson');
  await checkFormatResult(importId, 'nd');
  assert.equal((await finished(importId)).rejected_rows[0]!.line, 4);
});

test('an XML upload applies like CSV', async () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<items>
  <item operation="ADD"><item_id>xm-1</item_id><item_type>article</item_type><title>One</title>
    <categories><category><level>news</level><level>world</level></category></categories><tags><tag>x</tag></tags>
    <images><image>https://x/1.jpg</image><image><url>https://x/2.jpg</url></image></images>
    <item_attributes><author>Ann</author></item_attributes></item>
  <item operation="ADD" item_id="xm-2" item_type="product"><title>Two</title></item>
  <item operation="UPDATE" item_id="xm-2" item_type="product"><description>Second</description><title>Two</title></item>
  <item operation="ADD" item_id="xm-3" item_type="article"><title>a</title><title>b</title></item>
</items>`;
  const importId = await upload(xml, 'application/xml');
  const done = await finished(importId);
  assert.equal(done.created, 2);
  assert.equal(done.updated, 1);
  assert.deepEqual(done.rejected_rows, [{ row: 4, line: 9, reason: "field 'title' is given more than once" }]);
  assert.deepEqual((await getItem('article', 'xm-1')).body, {
    environment: 'demo',
    item_id: 'xm-1',
    item_type: 'article',
    title: 'One',
    categories: [['news', 'world']],
    tags: ['x'],
    images: ['https://x/1.jpg', { url: 'https://x/2.jpg' }],
    item_attributes: { author: 'Ann' },
  });
  assert.equal((await getItem('product', 'xm-2')).body.description, 'Second');
});

async function dropped(name: string): Promise<ImportView> {
  return waitFor(`the drop of ${name}`, async () => {
    const list = await api<{ imports: ImportView[] }>('GET', '/api/demo/imports');
    const found = list.body.imports.find((i) => i.file === name && i.report_file !== null);
    return found ? (await api<ImportView>('GET', `/api/demo/imports/${found.import_id}`)).body : undefined;
  });
}

test('a file put in the inbox folder is taken once settled, applied, and moved to done/ with its report', async () => {
  writeFileSync(inbox('.hidden.csv'), 'operation,item_id,item_type\nADD,hidden-1,article\n');
  writeFileSync(inbox('partial.csv.part'), 'operation,item_id,item_type\nADD,partial-1,article\n');
  writeFileSync(inbox('drop.csv'), 'operation,item_id,item_type,title\nADD,drop-1,article,Dropped\n');
  const done = await dropped('drop.csv');
  assert.equal(done.source, 'inbox');
  assert.equal(done.state, 'done');
  assert.equal(done.created, 1);
  assert.equal((await getItem('article', 'drop-1')).body.title, 'Dropped');
  assert.ok(readdirSync(inbox('done')).includes(`${done.import_id}--drop.csv`));
  assert.ok(readdirSync(inbox('done')).includes(`${done.import_id}--drop.csv.report.json`));
  assert.ok(!existsSync(inbox('drop.csv')));
  assert.ok(existsSync(inbox('.hidden.csv')), 'hidden files are left alone');
  assert.ok(existsSync(inbox('partial.csv.part')), 'files still being written are left alone');
});

test('a gzip-compressed drop is read through gunzip', async () => {
  writeFileSync(inbox('batch.ndjson.gz'), gzipSync('{"operation":"ADD","item_id":"gz-1","item_type":"video","title":"Zipped"}\n'));
  const done = await dropped('batch.ndjson.gz');
  assert.equal(done.state, 'done');
  assert.equal((await getItem('video', 'gz-1')).body.title, 'Zipped');
});

test('a file that breaks mid-way fails at its line, keeps the rows before it, and moves to failed/', async () => {
  writeFileSync(inbox('broken.json'), '[\n{"operation":"ADD","item_id":"br-1","item_type":"article"},\n{"operation":"ADD","item_id":"br-2","item_type":"article"}\n{"operation":"ADD","item_id":"br-3","item_type":"article"}\n]');
  const failed = await dropped('broken.json');
  assert.equal(failed.state, 'failed');
  assert.equal(failed.error_line, 4);
  assert.match(failed.error!, /expected , or \] between array elements/);
  assert.equal(failed.created, 2);
  assert.equal((await getItem('article', 'br-2')).status, 200);
  assert.equal((await getItem('article', 'br-3')).status, 404);
  assert.ok(readdirSync(inbox('failed')).includes(`${failed.import_id}--broken.json`));
  assert.ok(readdirSync(inbox('failed')).includes(`${failed.import_id}--broken.json.report.json`));
});

test('a file of an unknown format fails without being read', async () => {
  writeFileSync(inbox('notes.txt'), 'operation,item_id,item_type\nADD,txt-1,article\n');
  const failed = await dropped('notes.txt');
  assert.equal(failed.state, 'failed');
  assert.equal(failed.format, null);
  assert.match(failed.error!, /not a supported format/);
  assert.equal(failed.rows, 0);
  assert.equal((await getItem('article', 'txt-1')).status, 404);
});

test('a CSV header with a column that is no Item field fails the file before any row is applied', async () => {
  writeFileSync(inbox('typo.csv'), 'operation,item_id,item_type,titel\nADD,typo-1,article,Oops\n');
  const failed = await dropped('typo.csv');
  assert.equal(failed.state, 'failed');
  assert.equal(failed.error_line, 1);
  assert.match(failed.error!, /column 'titel' is not an Item field/);
  assert.equal((await getItem('article', 'typo-1')).status, 404);
});
