// Items and change records share their msgpack structures since issue 12 (store/open.ts). A data
// directory written before holds records that carry their structures inline: the service must
// serve them, update them and keep the change feed readable across both forms.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { open } from 'lmdb';
import { mainDatabaseOptions, SHARED_STRUCTURES_KEY, storePath } from '../../src/store/open.ts';
import { getToken } from '../helpers/auth.ts';
import { readChanges } from '../helpers/store-snapshot.ts';
import { sharedDataDir, startServer, type TestServer } from '../helpers/server.ts';

const item = (id: string, title: string) => ({
  environment: 'demo',
  item_id: id,
  item_type: 'article',
  title,
  categories: [['news'], ['news', 'world']],
  tags: ['t1'],
  item_attributes: { author: 'Ann' },
  publication_datetime: `2024-05-0${id.slice(-1)}T10:00:00Z`,
});

/** Rewrites every item and change record as an earlier version stored them: plain msgpack, structures inline. */
async function storeAsBefore(dataDir: string): Promise<void> {
  const path = storePath(dataDir);
  const records: Record<string, Array<{ key: unknown; value: unknown }>> = {};
  let root = open({ path, maxDbs: 16 });
  for (const name of ['items', 'changes']) {
    records[name] = [...root.openDB(mainDatabaseOptions(name)).getRange()].filter(({ key }) => key !== SHARED_STRUCTURES_KEY).map(({ key, value }) => ({ key, value }));
  }
  await root.close();
  root = open({ path, maxDbs: 16 });
  for (const name of ['items', 'changes']) {
    const db = root.openDB({ name });
    await db.remove(SHARED_STRUCTURES_KEY);
    for (const { key, value } of records[name]!) await db.put(key as never, value);
  }
  await root.close();
  // The earlier form: every record decodes in a fresh environment opened without shared structures.
  root = open({ path, maxDbs: 16, readOnly: true });
  for (const name of ['items', 'changes']) {
    const db = root.openDB({ name });
    assert.equal(db.get(SHARED_STRUCTURES_KEY), undefined);
    for (const { key, value } of records[name]!) assert.deepEqual(db.get(key as never), value);
  }
  await root.close();
}

test('items and change records stored before structures were shared are served, updated and listed', async (t) => {
  const disk = sharedDataDir();
  t.after(() => disk.close());
  let server: TestServer = disk.track(await startServer({ dataDir: disk.dataDir }));
  const token = await getToken(server);
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const put = (body: ReturnType<typeof item>) => fetch(`${server.url}/api/demo/items/article/${body.item_id}`, { method: 'PUT', headers, body: JSON.stringify(body) });
  const get = async (id: string) => (await fetch(`${server.url}/api/demo/items/article/${id}`, { headers })).json();
  for (const body of [item('a-1', 'First'), item('a-2', 'Second')]) {
    const res = await put(body);
    assert.equal(res.status, 200, await res.text());
  }
  assert.equal(await server.stop(), 0);
  await storeAsBefore(disk.dataDir);

  server = disk.track(await startServer({ dataDir: disk.dataDir }));
  assert.deepEqual(await get('a-1'), item('a-1', 'First'));
  // The ranking workers read them too: the newest first.
  const latest = async () => {
    const res = await fetch(`${server.url}/api/demo/recommendations/requests`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ page_type: 'home', channel: 'www', device_id: 'd1', lists: [{ list_name: 'latest', list_size: 5 }] }),
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { lists: Array<{ items: Array<{ item_id: string }> }> }).lists[0]!.items.map((i) => i.item_id);
  };
  assert.deepEqual(await latest(), ['a-2', 'a-1']);
  // Updated and added beside them, in the shared form.
  assert.equal((await put(item('a-2', 'Second, again'))).status, 200);
  assert.equal((await put(item('a-3', 'Third'))).status, 200);
  assert.deepEqual(await latest(), ['a-3', 'a-2', 'a-1']);
  assert.equal(await server.stop(), 0);

  server = disk.track(await startServer({ dataDir: disk.dataDir }));
  assert.deepEqual(await get('a-1'), item('a-1', 'First'));
  assert.deepEqual(await get('a-2'), item('a-2', 'Second, again'));
  assert.deepEqual(await get('a-3'), item('a-3', 'Third'));
  const changes = await readChanges(disk.dataDir);
  assert.deepEqual(
    changes.map((c) => [c.seq, c.itemId, c.op]),
    [
      [1, 'a-1', 'create'],
      [2, 'a-2', 'create'],
      [3, 'a-2', 'update'],
      [4, 'a-3', 'create'],
    ],
  );
});
