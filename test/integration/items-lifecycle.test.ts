import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getToken } from '../helpers/auth.ts';
import { startServer } from '../helpers/server.ts';
import { readChanges } from '../helpers/store-snapshot.ts';

const ARTICLE = {
  environment: 'demo',
  item_id: 'a-1',
  item_type: 'article',
  title: 'Hello',
  description: 'An article',
  categories: ['news', ['news', 'world']],
  tags: ['t1'],
  images: ['https://example.com/1.jpg', { url: 'https://example.com/2.jpg' }],
  item_attributes: { author: 'Ann' },
  publication_datetime: '2024-05-01T10:00:00+02:00',
  end_datetime: '2030-01-01T00:00:00Z',
  ancestry_level: 'item',
};

test('an item goes through create, read, disable, enable, list, delete and re-create', async (t) => {
  const server = await startServer();
  t.after(() => server.close());
  const token = await getToken(server);
  const auth = { Authorization: `Bearer ${token}` };
  const url = `${server.url}/api/demo/items/article/a-1`;

  let res = await fetch(url, { method: 'PUT', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify(ARTICLE) });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '');

  res = await fetch(url, { headers: auth });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { ...ARTICLE, categories: [['news'], ['news', 'world']] });

  res = await fetch(`${url}/disable`, { method: 'POST', headers: auth });
  assert.equal(res.status, 200);
  res = await fetch(`${server.url}/api/demo/items/article`, { headers: auth });
  assert.deepEqual(await res.json(), { items: [{ item_id: 'a-1', enabled: false }], next_cursor: null });

  res = await fetch(`${url}/enable`, { method: 'POST', headers: auth });
  assert.equal(res.status, 200);
  res = await fetch(`${server.url}/api/demo/items/article`, { headers: auth });
  assert.deepEqual(await res.json(), { items: [{ item_id: 'a-1', enabled: true }], next_cursor: null });

  res = await fetch(url, { method: 'DELETE', headers: auth });
  assert.equal(res.status, 200);
  res = await fetch(url, { headers: auth });
  assert.equal(res.status, 404);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  assert.equal(((await res.json()) as { status: number }).status, 404);

  res = await fetch(url, { method: 'PUT', headers: auth, body: JSON.stringify({ ...ARTICLE, title: 'Again' }) });
  assert.equal(res.status, 200);
  res = await fetch(url, { headers: auth });
  assert.equal(((await res.json()) as { title: string }).title, 'Again');

  const changes = await readChanges(server.dataDir);
  assert.deepEqual(
    changes.map((c) => c.op),
    ['create', 'disable', 'enable', 'delete', 'create'],
  );
  assert.deepEqual(changes.map((c) => c.seq), [1, 2, 3, 4, 5]);
  assert.ok(changes.every((c) => c.ix === changes[0]!.ix), 'the dense index survives delete and re-create');
});
