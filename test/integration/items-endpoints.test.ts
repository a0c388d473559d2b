// The success paths of the Items API against the real server: exact statuses, empty bodies where
// SPEC.md says "no content", round-trips of both documented shapes, state, pagination, deletion,
// and isolation between environments.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getToken, runCli } from '../helpers/auth.ts';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { readChanges, snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

type Json = Record<string, unknown>;
interface ListPage {
  items: Array<{ item_id: string; enabled: boolean }>;
  next_cursor: string | null;
}

/** A client of one server with one bearer token. */
function apiClient(server: TestServer, token: string) {
  const request = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  const itemPath = (env: string, type: string, id: string) => `/api/${env}/items/${type}/${encodeURIComponent(id)}`;
  return {
    request,
    itemPath,
    /** PUT and assert SPEC.md's "200 updated (no content)". */
    async put(item: Json): Promise<void> {
      const res = await request('PUT', itemPath(String(item.environment), String(item.item_type), String(item.item_id)), item);
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.equal(text, '');
    },
    async get(env: string, type: string, id: string): Promise<Json> {
      const res = await request('GET', itemPath(env, type, id));
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.equal(res.headers.get('content-type'), 'application/json');
      return JSON.parse(text) as Json;
    },
    async status(method: string, path: string, body?: unknown): Promise<number> {
      const res = await request(method, path, body);
      await res.arrayBuffer();
      return res.status;
    },
    async list(env: string, type: string, query = ''): Promise<ListPage> {
      const res = await request('GET', `/api/${env}/items/${type}${query}`);
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.equal(res.headers.get('content-type'), 'application/json');
      return JSON.parse(text) as ListPage;
    },
    /** Every entry of a type's list, following next_cursor with pages of `limit`. */
    async listAll(env: string, type: string, limit = 1000): Promise<ListPage['items']> {
      const all: ListPage['items'] = [];
      let cursor: string | null = '';
      do {
        const page: ListPage = await this.list(env, type, `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        all.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor !== null);
      return all;
    },
  };
}

const article = (id: string, fields: Json = {}): Json => ({ environment: 'demo', item_id: id, item_type: 'article', ...fields });

const FULL_ARTICLE = article('full-1', {
  title: 'Full article',
  description: 'Every field of SPEC.md',
  content_body: 'The complete text.\nWith a second line, quotes " and unicode: ü 😀',
  uri: 'https://example.com/articles/full-1?x=1&y=2',
  categories: [['news', 'world', 'europe']],
  tags: ['t1', 't2'],
  images: ['https://example.com/1.jpg'],
  language: 'de-CH',
  item_attributes: { author: 'Ann', pages: '12' },
  publication_datetime: '2024-05-01T10:00:00+02:00',
  end_datetime: '2030-01-01T00:00:00Z',
  access_type: 'paid',
  flags: ['premium', 'long-read'],
  parent: 'series-1',
  ancestry_level: 'model',
});

describe('Items API endpoints (demo environment)', () => {
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;

  before(async () => {
    server = await startServer();
    api = apiClient(server, await getToken(server));
  });
  after(() => server.close());

  test('PUT of a new item answers 200 with an empty body and GET returns every field as sent', async () => {
    const res = await api.request('PUT', '/api/demo/items/article/full-1', FULL_ARTICLE);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), null);
    assert.equal(await res.text(), '');
    assert.deepEqual(await api.get('demo', 'article', 'full-1'), FULL_ARTICLE);
    const listed = await api.listAll('demo', 'article');
    assert.deepEqual(listed.find((i) => i.item_id === 'full-1'), { item_id: 'full-1', enabled: true });
  });

  test('PUT of an item with only the required fields answers 200 and GET returns exactly them', async () => {
    await api.put(article('min-1'));
    assert.deepEqual(await api.get('demo', 'article', 'min-1'), article('min-1'));
  });

  test('PUT on an existing item replaces it: fields absent from the update are gone', async () => {
    await api.put(article('upd-1', { title: 'First', tags: ['a'], item_attributes: { k: 'v' }, flags: ['f'] }));
    const replacement = article('upd-1', { title: 'Second', description: 'new' });
    await api.put(replacement);
    assert.deepEqual(await api.get('demo', 'article', 'upd-1'), replacement);
    const changes = (await readChanges(server.dataDir)).filter((c) => c.itemId === 'upd-1');
    assert.deepEqual(changes.map((c) => c.op), ['create', 'update']);
  });

  test('PUT without body on a known item answers 200 with an empty body and changes nothing stored', async () => {
    await api.put(article('nobody-1', { title: 'Kept' }));
    const stored = await snapshotStore(server.dataDir);
    const res = await api.request('PUT', '/api/demo/items/article/nobody-1');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    assertSameStore(await snapshotStore(server.dataDir), stored);
    assert.deepEqual(await api.get('demo', 'article', 'nobody-1'), article('nobody-1', { title: 'Kept' }));
  });

  test('PUT with an empty body on a known item answers 200 and changes nothing stored', async () => {
    const stored = await snapshotStore(server.dataDir);
    const res = await api.request('PUT', '/api/demo/items/article/nobody-1', '');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    assertSameStore(await snapshotStore(server.dataDir), stored);
  });

  test('POST /api/demo/items/{type} creates an item (200, empty body) and a second POST replaces it', async () => {
    const created = article('hook-1', { title: 'From a webhook', tags: ['x'] });
    let res = await api.request('POST', '/api/demo/items/article', created);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    assert.deepEqual(await api.get('demo', 'article', 'hook-1'), created);

    const updated = article('hook-1', { title: 'Updated by webhook' });
    res = await api.request('POST', '/api/demo/items/article', updated);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    assert.deepEqual(await api.get('demo', 'article', 'hook-1'), updated);
    const changes = (await readChanges(server.dataDir)).filter((c) => c.itemId === 'hook-1');
    assert.deepEqual(changes.map((c) => c.op), ['create', 'update']);
  });

  test('POST creates an item that PUT then updates: both channels write the same item', async () => {
    assert.equal(await api.status('POST', '/api/demo/items/article', article('both-1', { title: 'POST' })), 200);
    await api.put(article('both-1', { title: 'PUT' }));
    assert.deepEqual(await api.get('demo', 'article', 'both-1'), article('both-1', { title: 'PUT' }));
  });

  test('categories given as strings come back as single-level paths', async () => {
    await api.put(article('cat-str', { categories: ['news', 'sport'] }));
    assert.deepEqual((await api.get('demo', 'article', 'cat-str')).categories, [['news'], ['sport']]);
  });

  test('categories given as arrays of strings come back as the same paths', async () => {
    const paths = [['news'], ['news', 'world'], ['news', 'world', 'europe']];
    await api.put(article('cat-arr', { categories: paths }));
    assert.deepEqual((await api.get('demo', 'article', 'cat-arr')).categories, paths);
  });

  test('categories mixing strings and arrays come back as paths in the order sent', async () => {
    await api.put(article('cat-mix', { categories: ['news', ['news', 'world'], 'sport', ['sport', 'football', 'cup']] }));
    assert.deepEqual((await api.get('demo', 'article', 'cat-mix')).categories, [
      ['news'],
      ['news', 'world'],
      ['sport'],
      ['sport', 'football', 'cup'],
    ]);
  });

  test('an empty categories array round-trips as an empty array', async () => {
    await api.put(article('cat-empty', { categories: [] }));
    assert.deepEqual((await api.get('demo', 'article', 'cat-empty')).categories, []);
  });

  test('images given as strings, as objects, and mixed round-trip unchanged', async () => {
    const strings = ['https://example.com/a.jpg', 'https://example.com/b.png'];
    const objects = [{ url: 'https://example.com/c.jpg', width: '800', caption: 'Cé 😀' }];
    const mixed = ['https://example.com/d.jpg', { url: 'https://example.com/e.jpg' }];
    for (const [id, images] of [['img-str', strings], ['img-obj', objects], ['img-mix', mixed]] as const) {
      await api.put(article(id, { images }));
      assert.deepEqual((await api.get('demo', 'article', id)).images, images, id);
    }
  });

  test('item_attributes as {name, value} with a nested value round-trips unchanged', async () => {
    const attributes = { name: 'specs', value: { weight: 1.5, sizes: ['s', 'm'], ok: true, none: null, deep: { a: { b: 'c' } } } };
    await api.put(article('attr-nv', { item_attributes: attributes }));
    assert.deepEqual((await api.get('demo', 'article', 'attr-nv')).item_attributes, attributes);
  });

  test('item_attributes as a string map round-trips unchanged', async () => {
    const attributes = { author: 'Ann', 'section name': 'Welt', empty: '', unicode: 'ü 😀' };
    await api.put(article('attr-map', { item_attributes: attributes }));
    assert.deepEqual((await api.get('demo', 'article', 'attr-map')).item_attributes, attributes);
  });

  test('item_attributes.value nested to the depth limit is accepted and round-trips', async () => {
    let value: Json = {};
    for (let i = 1; i < 15; i++) value = { a: value };
    await api.put(article('attr-deep', { item_attributes: { name: 'deep', value } }));
    assert.deepEqual((await api.get('demo', 'article', 'attr-deep')).item_attributes, { name: 'deep', value });
  });

  test('timestamps with Z, with an offset and with fractional seconds are accepted and kept as sent', async () => {
    const fields = { publication_datetime: '2024-02-29T23:59:59.123-05:30', end_datetime: '2031-12-31T00:00:00Z' };
    await api.put(article('ts-1', fields));
    const got = await api.get('demo', 'article', 'ts-1');
    assert.equal(got.publication_datetime, fields.publication_datetime);
    assert.equal(got.end_datetime, fields.end_datetime);
  });

  test('an id with spaces, slashes and unicode percent-encoded in the path round-trips through every operation', async () => {
    const id = 'a b/c ü 😀 ?#%&+';
    const path = api.itemPath('demo', 'article', id);
    assert.match(path, /%2F/);
    await api.put(article(id, { title: 'Odd id' }));
    assert.deepEqual(await api.get('demo', 'article', id), article(id, { title: 'Odd id' }));
    assert.deepEqual((await api.listAll('demo', 'article')).find((i) => i.item_id === id), { item_id: id, enabled: true });
    assert.equal(await api.status('POST', `${path}/disable`), 200);
    assert.deepEqual((await api.listAll('demo', 'article')).find((i) => i.item_id === id), { item_id: id, enabled: false });
    assert.equal(await api.status('PUT', path), 200);
    assert.equal(await api.status('DELETE', path), 200);
    assert.equal(await api.status('GET', path), 404);
  });

  test('an item id of 256 four-byte characters (the limit) is accepted and round-trips', async () => {
    const id = '😀'.repeat(256);
    await api.put(article(id));
    assert.deepEqual(await api.get('demo', 'article', id), article(id));
  });

  test('a disabled item keeps its data: GET answers 200 and the list shows enabled false', async () => {
    await api.put(FULL_ARTICLE);
    const res = await api.request('POST', '/api/demo/items/article/full-1/disable');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    assert.deepEqual(await api.get('demo', 'article', 'full-1'), FULL_ARTICLE);
    assert.deepEqual((await api.listAll('demo', 'article')).find((i) => i.item_id === 'full-1'), { item_id: 'full-1', enabled: false });
  });

  test('PUT on a disabled item updates its data and keeps it disabled; enable makes it enabled again', async () => {
    const updated = { ...FULL_ARTICLE, title: 'Updated while disabled' };
    await api.put(updated);
    assert.deepEqual(await api.get('demo', 'article', 'full-1'), updated);
    assert.deepEqual((await api.listAll('demo', 'article')).find((i) => i.item_id === 'full-1'), { item_id: 'full-1', enabled: false });
    assert.equal(await api.status('PUT', '/api/demo/items/article/full-1'), 200);
    assert.equal(await api.status('POST', '/api/demo/items/article', updated), 200);
    assert.deepEqual((await api.listAll('demo', 'article')).find((i) => i.item_id === 'full-1'), { item_id: 'full-1', enabled: false });

    const res = await api.request('POST', '/api/demo/items/article/full-1/enable');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    assert.deepEqual((await api.listAll('demo', 'article')).find((i) => i.item_id === 'full-1'), { item_id: 'full-1', enabled: true });
  });

  test('enable of an enabled item and disable of a disabled item answer 200 and record no change', async () => {
    await api.put(article('idem-1'));
    const stored = await snapshotStore(server.dataDir);
    assert.equal(await api.status('POST', '/api/demo/items/article/idem-1/enable'), 200);
    assertSameStore(await snapshotStore(server.dataDir), stored);
    assert.equal(await api.status('POST', '/api/demo/items/article/idem-1/disable'), 200);
    const afterDisable = await snapshotStore(server.dataDir);
    assert.equal(await api.status('POST', '/api/demo/items/article/idem-1/disable'), 200);
    assertSameStore(await snapshotStore(server.dataDir), afterDisable);
    const ops = (await readChanges(server.dataDir)).filter((c) => c.itemId === 'idem-1').map((c) => c.op);
    assert.deepEqual(ops, ['create', 'disable']);
  });

  test('list pagination with limit=10 returns 25 items in id order exactly once and ends with next_cursor null', async () => {
    const ids = Array.from({ length: 25 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
    // Created out of order: the list is in id order, not creation order.
    for (const id of [...ids].reverse()) await api.put({ environment: 'demo', item_id: id, item_type: 'product' });

    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: ListPage = await api.list('demo', 'product', `?limit=10${cursor === null ? '' : `&cursor=${cursor}`}`);
      sizes.push(page.items.length);
      seen.push(...page.items.map((i) => i.item_id));
      assert.ok(page.items.every((i) => i.enabled));
      cursor = page.next_cursor;
      if (cursor === null) break;
      assert.equal(typeof cursor, 'string');
    }
    assert.equal(cursor, null, 'the last page has next_cursor null');
    assert.deepEqual(sizes, [10, 10, 5]);
    assert.deepEqual(seen, ids);
  });

  test('list pagination whose last page is exactly full ends there with next_cursor null', async () => {
    const page1 = await api.list('demo', 'product', '?limit=20');
    assert.equal(page1.items.length, 20);
    assert.notEqual(page1.next_cursor, null);
    const page2 = await api.list('demo', 'product', `?limit=5&cursor=${page1.next_cursor}`);
    assert.deepEqual(page2.items.map((i) => i.item_id), ['p-20', 'p-21', 'p-22', 'p-23', 'p-24']);
    assert.equal(page2.next_cursor, null);
    const all = await api.list('demo', 'product', '?limit=25');
    assert.equal(all.items.length, 25);
    assert.equal(all.next_cursor, null);
  });

  test('list without parameters returns up to 100 items, an empty cursor means the first page', async () => {
    const first = await api.list('demo', 'product');
    assert.equal(first.items.length, 25);
    assert.equal(first.next_cursor, null);
    assert.deepEqual(await api.list('demo', 'product', '?cursor='), first);
  });

  test('list pagination follows deletions between pages without repeating or skipping the rest', async () => {
    const page1 = await api.list('demo', 'product', '?limit=10');
    const lastOfPage1 = page1.items.at(-1)!.item_id;
    assert.equal(await api.status('DELETE', `/api/demo/items/product/${lastOfPage1}`), 200);
    const page2 = await api.list('demo', 'product', `?limit=10&cursor=${page1.next_cursor}`);
    assert.equal(page2.items[0]!.item_id, 'p-10');
    await api.put({ environment: 'demo', item_id: lastOfPage1, item_type: 'product' });
  });

  test('the list of a type returns only items of that type', async () => {
    await api.put({ environment: 'demo', item_id: 'shared-id', item_type: 'video', title: 'Video' });
    await api.put({ environment: 'demo', item_id: 'video-only', item_type: 'video' });
    await api.put(article('shared-id', { title: 'Article' }));
    assert.deepEqual(await api.listAll('demo', 'video'), [
      { item_id: 'shared-id', enabled: true },
      { item_id: 'video-only', enabled: true },
    ]);
    const articles = (await api.listAll('demo', 'article')).map((i) => i.item_id);
    assert.ok(articles.includes('shared-id'));
    assert.ok(!articles.includes('video-only'));
    assert.ok(!articles.some((id) => id.startsWith('p-')));
    assert.equal((await api.get('demo', 'video', 'shared-id')).title, 'Video');
    assert.equal((await api.get('demo', 'article', 'shared-id')).title, 'Article');
  });

  test('disabling an item of one type leaves the item with the same id of another type enabled', async () => {
    assert.equal(await api.status('POST', '/api/demo/items/video/shared-id/disable'), 200);
    assert.deepEqual((await api.listAll('demo', 'video')).find((i) => i.item_id === 'shared-id')?.enabled, false);
    assert.deepEqual((await api.listAll('demo', 'article')).find((i) => i.item_id === 'shared-id')?.enabled, true);
  });

  test('DELETE answers 200 with an empty body; GET then answers 404 and the list omits the item', async () => {
    await api.put(article('del-1', { title: 'To delete' }));
    const res = await api.request('DELETE', '/api/demo/items/article/del-1');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    assert.equal(await api.status('GET', '/api/demo/items/article/del-1'), 404);
    assert.ok(!(await api.listAll('demo', 'article')).some((i) => i.item_id === 'del-1'));
    assert.equal(await api.status('DELETE', '/api/demo/items/article/del-1'), 404);
    assert.equal(await api.status('POST', '/api/demo/items/article/del-1/enable'), 400);
    assert.equal(await api.status('PUT', '/api/demo/items/article/del-1'), 404);
  });

  test('PUT after DELETE re-creates the item with the new data, enabled', async () => {
    await api.put(article('del-2', { title: 'Old', tags: ['old'] }));
    assert.equal(await api.status('POST', '/api/demo/items/article/del-2/disable'), 200);
    assert.equal(await api.status('DELETE', '/api/demo/items/article/del-2'), 200);
    await api.put(article('del-2', { title: 'New' }));
    assert.deepEqual(await api.get('demo', 'article', 'del-2'), article('del-2', { title: 'New' }));
    assert.deepEqual((await api.listAll('demo', 'article')).find((i) => i.item_id === 'del-2'), { item_id: 'del-2', enabled: true });
    const ops = (await readChanges(server.dataDir)).filter((c) => c.itemId === 'del-2').map((c) => c.op);
    assert.deepEqual(ops, ['create', 'disable', 'delete', 'create']);
  });

  test('no request in this file answered a 5xx (nothing logged as an internal error)', () => {
    assert.deepEqual(server.logs.filter((line) => line.includes('"kind":"internal"')), []);
  });
});

describe('Items API across two environments', () => {
  const CONFIG = { environments: { demo: { itemTypes: ['article'] }, shop: { itemTypes: ['product'] } } };
  let configDir: string;
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;

  before(async () => {
    configDir = tempDir('affinity-config-');
    const configFile = join(configDir, 'config.json');
    writeFileSync(configFile, JSON.stringify(CONFIG));
    server = await startServer({ env: { AFFINITY_CONFIG: configFile } });
    const cli = await runCli(['client', 'create', '--env', 'demo', '--env', 'shop'], {
      AFFINITY_DATA_DIR: server.dataDir,
      AFFINITY_CONFIG: configFile,
    });
    assert.equal(cli.code, 0, cli.stderr);
    const { client_id: clientId, client_secret: clientSecret } = JSON.parse(cli.stdout) as Record<string, string>;
    api = apiClient(server, await getToken(server, { clientId: clientId!, clientSecret: clientSecret! }));
  });
  after(async () => {
    await server.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  test('items with the same id in two environments are stored apart and each GET sees only its own', async () => {
    const inDemo = { environment: 'demo', item_id: 'x-1', item_type: 'article', title: 'Demo article' };
    const inShop = { environment: 'shop', item_id: 'x-1', item_type: 'product', title: 'Shop product' };
    await api.put(inDemo);
    await api.put(inShop);
    assert.deepEqual(await api.get('demo', 'article', 'x-1'), inDemo);
    assert.deepEqual(await api.get('shop', 'product', 'x-1'), inShop);
    assert.equal(await api.status('GET', '/api/shop/items/article/x-1'), 404);
    assert.equal(await api.status('GET', '/api/demo/items/product/x-1'), 404);
  });

  test('an environment\'s list shows only its own items and refuses the other environment\'s types', async () => {
    await api.put({ environment: 'demo', item_id: 'demo-only', item_type: 'article' });
    assert.deepEqual((await api.listAll('demo', 'article')).map((i) => i.item_id), ['demo-only', 'x-1']);
    assert.deepEqual((await api.listAll('shop', 'product')).map((i) => i.item_id), ['x-1']);
    assert.equal(await api.status('GET', '/api/shop/items/article'), 400);
    assert.equal(await api.status('GET', '/api/demo/items/product'), 400);
  });

  test('an item type of one environment is refused in the other with 415 and nothing stored', async () => {
    const stored = await snapshotStore(server.dataDir);
    const res = await api.request('PUT', '/api/shop/items/article/a-1', { environment: 'shop', item_id: 'a-1', item_type: 'article' });
    assert.equal(res.status, 415);
    const problem = (await res.json()) as { errors: Array<{ path: string }> };
    assert.deepEqual(problem.errors.map((e) => e.path), ['/item_type']);
    assertSameStore(await snapshotStore(server.dataDir), stored);
  });

  test('disabling or deleting in one environment leaves the same id in the other untouched', async () => {
    assert.equal(await api.status('POST', '/api/demo/items/article/x-1/disable'), 200);
    assert.deepEqual(await api.listAll('shop', 'product'), [{ item_id: 'x-1', enabled: true }]);
    assert.equal(await api.status('POST', '/api/shop/items/article/x-1/enable'), 400);
    assert.equal(await api.status('DELETE', '/api/demo/items/article/x-1'), 200);
    assert.equal(await api.status('DELETE', '/api/shop/items/article/x-1'), 404);
    assert.equal((await api.get('shop', 'product', 'x-1')).title, 'Shop product');
  });

  test('the default client of the first start is limited to the demo environment', async () => {
    const demoOnly = apiClient(server, await getToken(server));
    assert.equal(await demoOnly.status('GET', '/api/demo/items/article/demo-only'), 200);
    assert.equal(await demoOnly.status('GET', '/api/shop/items/product/x-1'), 401);
  });
});
