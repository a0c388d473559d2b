// How a feed poll behaves against a live HTTP endpoint (a local server the test programs):
// conditional GET, the disable marker, per-entry rejections, parse failures that change
// nothing, retries, timeouts, the body limit, the static authentication header, charsets,
// the mapped formats (JSON, CSV, XML), and the scheduler polling on its own.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { apiClient, waitFor, type Api } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { startFeedServer, type FeedServer, type Reply } from '../helpers/feed-server.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { readChanges } from '../helpers/store-snapshot.ts';

interface Feed {
  feed_id: string;
  auth_header: { name: string; value: string } | null;
  status: {
    state: string;
    polls: number;
    http_status: number | null;
    entries_seen: number;
    entries_applied: number;
    entries_unchanged: number;
    entries_rejected: number;
    created: number;
    updated: number;
    enabled: number;
    disabled: number;
    rejected_entries: Array<{ entry: number; item_id: string | null; reason: string }>;
    last_error: string | null;
    consecutive_failures: number;
    encoding: string | null;
    detected_format: string | null;
    warnings: string[];
  };
}

let server: TestServer;
let feeds: FeedServer;
let api: Api;
let n = 0;

before(async () => {
  feeds = await startFeedServer();
  server = await startServer({
    config: {
      ingest: { feeds: { timeoutMs: 500, maxBodyBytes: 64 * 1024, retries: 2, retryBaseMs: 20 } },
      // The feed server is on loopback, which the outbound guard refuses unless allowed.
      environments: { demo: { itemTypes: ['article', 'video', 'product'], outbound: { allow: ['127.0.0.1'] } } },
    },
  });
  api = apiClient(server, await getToken(server));
});
after(async () => {
  await server?.close();
  await feeds?.close();
});

/** Adds a feed for `path` of the local server (interval 1h: only explicit polls) and returns its id. */
async function addFeed(path: string, extra: Record<string, unknown> = {}): Promise<string> {
  const feedId = `t${++n}`;
  const res = await api('POST', '/api/demo/feeds', { feed_id: feedId, url: `${feeds.url}${path}`, format: 'rss', item_type: 'article', interval: '1h', ...extra });
  assert.equal(res.status, 201, res.text);
  return feedId;
}

async function poll(feedId: string): Promise<Feed['status']> {
  const res = await api<Feed>('POST', `/api/demo/feeds/${feedId}/poll`);
  assert.equal(res.status, 200, res.text);
  return res.body.status;
}

function rss(items: string[], extra = ''): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>T</title>${extra}${items.join('')}</channel></rss>`;
}

function entry(guid: string, fields = ''): string {
  return `<item><guid>${guid}</guid><title>Title ${guid}</title><link>https://example.com/${guid}</link>${fields}</item>`;
}

async function getItem(id: string, itemType = 'article') {
  return api('GET', `/api/demo/items/${itemType}/${encodeURIComponent(id)}`);
}

test('a second poll sends If-None-Match and If-Modified-Since and a 304 changes nothing', async () => {
  feeds.route('/etag.rss', (req) => {
    if (req.headers['if-none-match'] === '"v1"') return { status: 304 };
    return { headers: { 'Content-Type': 'application/rss+xml', ETag: '"v1"', 'Last-Modified': 'Wed, 21 Oct 2015 07:28:00 GMT' }, body: rss([entry('etag-1')]) };
  });
  const id = await addFeed('/etag.rss');
  const first = await poll(id);
  assert.equal(first.state, 'applied');
  assert.equal(first.created, 1);
  const changes = (await readChanges(server.dataDir)).length;
  const second = await poll(id);
  assert.equal(second.state, 'not_modified');
  assert.equal(second.http_status, 304);
  const requests = feeds.requests('/etag.rss');
  const last = requests[requests.length - 1]!;
  assert.equal(last.headers['if-none-match'], '"v1"');
  assert.equal(last.headers['if-modified-since'], 'Wed, 21 Oct 2015 07:28:00 GMT');
  assert.equal((await readChanges(server.dataDir)).length, changes);
});

test('the same body again (no validators) is recognised and not re-applied', async () => {
  feeds.route('/same.rss', { headers: { 'Content-Type': 'application/rss+xml' }, body: rss([entry('same-1')]) });
  const id = await addFeed('/same.rss');
  assert.equal((await poll(id)).state, 'applied');
  assert.equal((await poll(id)).state, 'unchanged');
});

test('the disable marker disables, re-publishing without it enables, and an item leaving the feed is left alone', async () => {
  let body = rss([entry('dm-1'), entry('dm-2', '<category>hidden</category><category>news</category>')]);
  feeds.route('/marker.rss', () => ({ headers: { 'Content-Type': 'application/rss+xml' }, body }));
  const id = await addFeed('/marker.rss', { disable_marker: { field: 'category', value: 'hidden' } });
  let status = await poll(id);
  assert.equal(status.created, 2);
  assert.equal(status.disabled, 1);
  let list = await api<{ items: Array<{ item_id: string; enabled: boolean }> }>('GET', '/api/demo/items/article?limit=1000');
  assert.equal(list.body.items.find((i) => i.item_id === 'dm-2')?.enabled, false);
  assert.deepEqual((await getItem('dm-2')).body.categories, [['news']], 'the marker is not a category');

  body = rss([entry('dm-2', '<category>news</category>')]);
  status = await poll(id);
  assert.equal(status.enabled, 1);
  assert.equal(status.entries_seen, 1);
  list = await api('GET', '/api/demo/items/article?limit=1000');
  assert.equal(list.body.items.find((i) => i.item_id === 'dm-2')?.enabled, true);
  assert.equal(list.body.items.find((i) => i.item_id === 'dm-1')?.enabled, true, 'dm-1 left the feed and stays');
  assert.equal((await getItem('dm-1')).status, 200);

  const ops = (await readChanges(server.dataDir)).filter((c) => c.itemId === 'dm-2').map((c) => c.op);
  assert.deepEqual(ops, ['create', 'disable', 'enable']);
});

test('invalid entries are skipped with their reason while the valid ones apply', async () => {
  feeds.route('/mixed.rss', {
    headers: { 'Content-Type': 'application/rss+xml' },
    body: rss([
      entry('mix-1'),
      '<item><title>no id</title></item>',
      entry('mix-2', `<pubDate>${'x'.repeat(10)}</pubDate>`),
      entry('mix-1'),
      `<item><guid>${'long'.repeat(100)}</guid></item>`,
      entry('mix-3', '<pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate><dc:creator>Ann</dc:creator>'),
    ]),
  });
  const id = await addFeed('/mixed.rss');
  const status = await poll(id);
  assert.equal(status.state, 'applied');
  assert.equal(status.entries_seen, 6);
  assert.equal(status.created, 3);
  assert.equal(status.entries_rejected, 3);
  assert.deepEqual(
    status.rejected_entries.map((r) => [r.entry, r.item_id]),
    [
      [2, null],
      [4, 'mix-1'],
      [5, 'long'.repeat(100)],
    ],
  );
  assert.match(status.rejected_entries[0]!.reason, /no guid or link/);
  assert.match(status.rejected_entries[1]!.reason, /repeats the item_id of entry 1/);
  assert.match(status.rejected_entries[2]!.reason, /item_id must NOT have more than 256 characters/);
  assert.match(status.warnings.join(' '), /1 entry has an unreadable date/);
  const mix3 = await getItem('mix-3');
  assert.equal(mix3.body.publication_datetime, '2003-06-10T04:00:00.000Z');
  assert.deepEqual(mix3.body.item_attributes, { author: 'Ann' });
});

test('a body that fails to parse is an error, changes nothing, and is fetched whole again next time', async () => {
  let body = rss([entry('pe-1')]);
  feeds.route('/parse.rss', () => ({ headers: { 'Content-Type': 'application/rss+xml', ETag: `"${body.length}"` }, body }));
  const id = await addFeed('/parse.rss');
  assert.equal((await poll(id)).state, 'applied');
  body = rss([entry('pe-1', '<description>changed</description>'), entry('pe-2')]).slice(0, -20);
  const changes = (await readChanges(server.dataDir)).length;
  const status = await poll(id);
  assert.equal(status.state, 'error');
  assert.match(status.last_error!, /^parse: /);
  assert.equal(status.consecutive_failures, 1);
  assert.equal((await readChanges(server.dataDir)).length, changes, 'nothing applied');
  assert.equal((await getItem('pe-2')).status, 404);
  assert.equal((await getItem('pe-1')).body.description, undefined);
  body = rss([entry('pe-1'), entry('pe-2')]);
  const fixed = await poll(id);
  assert.equal(fixed.state, 'applied');
  assert.equal(fixed.consecutive_failures, 0);
  const requests = feeds.requests('/parse.rss');
  assert.equal(requests[requests.length - 1]!.headers['if-none-match'], `"${rss([entry('pe-1')]).length}"`, 'the validators of the last applied body');
});

test('503 answers are retried with backoff and the poll then applies', async () => {
  feeds.route('/flaky.rss', (_req, count): Reply => (count <= 2 ? { status: 503, headers: { 'Retry-After': '0' } } : { headers: { 'Content-Type': 'application/rss+xml' }, body: rss([entry('flaky-1')]) }));
  const id = await addFeed('/flaky.rss');
  const status = await poll(id);
  assert.equal(status.state, 'applied');
  assert.equal(feeds.requests('/flaky.rss').length, 3);
});

test('a server that does not answer in time fails the poll after the retries', async () => {
  feeds.route('/slow.rss', { delayMs: 1500, body: rss([entry('slow-1')]) });
  const id = await addFeed('/slow.rss');
  const status = await poll(id);
  assert.equal(status.state, 'error');
  assert.match(status.last_error!, /^fetch: no answer within 500 ms \(3 attempts\)/);
  assert.equal((await getItem('slow-1')).status, 404);
});

test('a 404 is not retried and counts as a failure', async () => {
  const id = await addFeed('/missing.rss');
  const status = await poll(id);
  assert.equal(status.state, 'error');
  assert.equal(status.http_status, 404);
  assert.match(status.last_error!, /^fetch: HTTP 404/);
  assert.equal(feeds.requests('/missing.rss').length, 1);
  assert.equal((await poll(id)).consecutive_failures, 2);
});

test('a body over the limit is cut off and fails the poll', async () => {
  feeds.route('/huge.rss', { headers: { 'Content-Type': 'application/rss+xml' }, body: rss([entry('huge-1', `<description>${'x'.repeat(100_000)}</description>`)]) });
  const id = await addFeed('/huge.rss');
  const status = await poll(id);
  assert.equal(status.state, 'error');
  assert.match(status.last_error!, /exceeds the limit of 65536 bytes/);
});

test('the static authentication header is sent, and never shown back', async () => {
  feeds.route('/private.rss', (req) =>
    req.headers['x-feed-token'] === 's3cret' ? { headers: { 'Content-Type': 'application/rss+xml' }, body: rss([entry('private-1')]) } : { status: 401 },
  );
  const id = await addFeed('/private.rss', { auth_header: { name: 'X-Feed-Token', value: 's3cret' } });
  assert.equal((await poll(id)).state, 'applied');
  const shown = await api<Feed>('GET', `/api/demo/feeds/${id}`);
  assert.deepEqual(shown.body.auth_header, { name: 'X-Feed-Token', value: '(hidden)' });
  assert.ok(!shown.text.includes('s3cret'));
  // A GET-edit-PUT round trip keeps the secret.
  const { feed_id: _id, status: _s, environment: _e, source: _src, created_at: _c, updated_at: _u, ...definition } = shown.body as unknown as Record<string, unknown>;
  const put = await api('PUT', `/api/demo/feeds/${id}`, { ...definition, interval: '2h' });
  assert.equal(put.status, 200, put.text);
  feeds.route('/private.rss', (req) =>
    req.headers['x-feed-token'] === 's3cret' ? { headers: { 'Content-Type': 'application/rss+xml' }, body: rss([entry('private-1'), entry('private-2')]) } : { status: 401 },
  );
  assert.equal((await poll(id)).created, 1);
});

test('a charset in the Content-Type decodes a body without an XML declaration', async () => {
  const body = Buffer.concat([Buffer.from('<rss version="2.0"><channel><item><guid>latin-1</guid><title>'), Buffer.from([0x43, 0x61, 0x66, 0xe9]), Buffer.from('</title></item></channel></rss>')]);
  feeds.route('/latin1.rss', { headers: { 'Content-Type': 'application/rss+xml; charset=ISO-8859-1' }, body });
  const id = await addFeed('/latin1.rss');
  const status = await poll(id);
  assert.equal(status.encoding, 'windows-1252');
  assert.equal((await getItem('latin-1')).body.title, 'Café');
});

test('a JSON feed maps source paths to Item fields, with items_path and the disable marker', async () => {
  feeds.route('/catalog.json', {
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      data: {
        products: [
          { sku: 'P-1', name: 'Lamp', info: { text: 'A lamp' }, cats: [['home', 'lighting']], labels: ['sale', 'new'], pics: [{ url: 'https://x/1.jpg' }], brand: 'Acme', released: 1700000000, status: 'live' },
          { sku: 'P-2', name: 'Chair', released: '2024-05-01T10:00:00+02:00', status: 'withdrawn' },
          { name: 'no sku' },
          { sku: 'P-3', released: '2024-05-01 10:00' },
        ],
      },
    }),
  });
  const id = await addFeed('/catalog.json', {
    format: 'json',
    item_type: 'product',
    items_path: 'data.products',
    mapping: { sku: 'item_id', name: 'title', 'info.text': 'description', cats: 'categories', labels: 'tags', 'pics.url': 'images', brand: 'item_attributes.brand', released: 'publication_datetime' },
    disable_marker: { field: 'status', value: 'withdrawn' },
  });
  const status = await poll(id);
  assert.equal(status.detected_format, 'json');
  assert.equal(status.created, 2);
  assert.equal(status.disabled, 1);
  assert.deepEqual(
    status.rejected_entries.map((r) => [r.entry, r.reason]),
    [
      [3, "has no value at 'sku' (mapped to item_id)"],
      [4, "publication_datetime: '2024-05-01 10:00' has no timezone offset"],
    ],
  );
  assert.deepEqual((await getItem('P-1', 'product')).body, {
    environment: 'demo',
    item_type: 'product',
    item_id: 'P-1',
    title: 'Lamp',
    description: 'A lamp',
    categories: [['home', 'lighting']],
    tags: ['sale', 'new'],
    images: ['https://x/1.jpg'],
    item_attributes: { brand: 'Acme' },
    publication_datetime: '2023-11-14T22:13:20.000Z',
  });
});

test('a CSV feed maps columns, reads JSON cells for lists, and rejects rows of the wrong width', async () => {
  feeds.route('/catalog.csv', {
    headers: { 'Content-Type': 'text/csv' },
    body: 'id;title;tags;when\nV-1;First;"[""a"",""b""]";Tue, 10 Jun 2003 04:00:00 GMT\nV-2;Second\nV-3;Third;x;\n',
  });
  const id = await addFeed('/catalog.csv', { format: 'csv', item_type: 'video', delimiter: ';', mapping: { id: 'item_id', title: 'title', tags: 'tags', when: 'publication_datetime' } });
  const status = await poll(id);
  assert.equal(status.created, 2);
  assert.deepEqual(status.rejected_entries, [{ entry: 2, item_id: null, reason: 'has 2 fields, the header has 4' }]);
  const v1 = await getItem('V-1', 'video');
  assert.deepEqual(v1.body.tags, ['a', 'b']);
  assert.equal(v1.body.publication_datetime, '2003-06-10T04:00:00.000Z');
  assert.deepEqual((await getItem('V-3', 'video')).body.tags, ['x']);
});

test('an XML feed maps element paths and attributes', async () => {
  feeds.route('/catalog.xml', {
    headers: { 'Content-Type': 'application/xml' },
    body: '<catalog><products><product id="X-1" state="on"><name>Desk</name><tags><tag>wood</tag><tag>office</tag></tags><image url="https://x/d.jpg"/></product><product id="X-2" state="off"><name>Shelf</name></product></products></catalog>',
  });
  const id = await addFeed('/catalog.xml', {
    format: 'xml',
    item_type: 'product',
    items_path: 'catalog.products.product',
    mapping: { '@id': 'item_id', name: 'title', 'tags.tag': 'tags', 'image.@url': 'images' },
    disable_marker: { field: '@state', value: 'off' },
  });
  const status = await poll(id);
  assert.equal(status.detected_format, 'xml');
  assert.equal(status.created, 2);
  assert.equal(status.disabled, 1);
  const x1 = await getItem('X-1', 'product');
  assert.deepEqual(x1.body.tags, ['wood', 'office']);
  assert.deepEqual(x1.body.images, ['https://x/d.jpg']);
  assert.equal(x1.body.title, 'Desk');
});

test('the scheduler polls a feed on its own every interval', async () => {
  feeds.route('/ticking.rss', (_req, count) => ({ headers: { 'Content-Type': 'application/rss+xml' }, body: rss([entry(`tick-${count}`)]) }));
  const res = await api('POST', '/api/demo/feeds', { feed_id: 'ticking', url: `${feeds.url}/ticking.rss`, format: 'rss', item_type: 'article', interval: '1s' });
  assert.equal(res.status, 201);
  await waitFor('two scheduled polls', async () => ((await api<Feed>('GET', '/api/demo/feeds/ticking')).body.status.polls >= 2 ? true : undefined));
  assert.equal((await getItem('tick-1')).status, 200);
  assert.equal((await getItem('tick-2')).status, 200);
  assert.equal((await api('DELETE', '/api/demo/feeds/ticking')).status, 200);
});
