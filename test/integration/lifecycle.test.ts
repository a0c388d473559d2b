import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getToken } from '../helpers/auth.ts';
import { exitCodeWithin, SHUTDOWN_BOUND_MS, type TestServer, sharedDataDir, startServer } from '../helpers/server.ts';

function article(i: number, run: string) {
  return {
    environment: 'demo',
    item_id: `${run}-${i}`,
    item_type: 'article',
    title: `Article ${i} of run ${run}`,
    description: `Body of article ${i} ${'x'.repeat(i % 97)}`,
    categories: [['news', `section-${i % 7}`]],
    tags: [`t${i % 5}`, `u${i % 11}`],
    item_attributes: { author: `author-${i % 13}` },
    publication_datetime: '2024-05-01T10:00:00+02:00',
  };
}

type Article = ReturnType<typeof article>;

function put(server: TestServer, token: string, item: Article): Promise<Response> {
  return fetch(`${server.url}/api/demo/items/article/${item.item_id}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(item),
  });
}

/** Asserts every item reads back exactly as it was written. */
async function assertAllReadable(server: TestServer, token: string, items: Article[]): Promise<void> {
  const WAVE = 50;
  for (let start = 0; start < items.length; start += WAVE) {
    await Promise.all(
      items.slice(start, start + WAVE).map(async (item) => {
        const res = await fetch(`${server.url}/api/demo/items/article/${item.item_id}`, {
          headers: { Authorization: `Bearer ${token}` },
        });
        assert.equal(res.status, 200, `item ${item.item_id} was acknowledged but is missing`);
        assert.deepEqual(await res.json(), item);
      }),
    );
  }
}

test('a server answers health checks, then drains on SIGTERM', async (t) => {
  const disk = sharedDataDir();
  t.after(() => disk.close());
  const dataDir = disk.dataDir;
  const first = disk.track(await startServer({ dataDir }));

  await t.test('GET /health answers 200 with status "ok"', async () => {
    const res = await fetch(`${first.url}/health`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    // Other fields (operator statistics) may sit beside it.
    assert.equal(((await res.json()) as { status: unknown }).status, 'ok');
  });

  await t.test('SIGTERM with PUTs in flight exits 0 and every acknowledged PUT is present after restart', async (t2) => {
    const token = await getToken(first);
    const items = Array.from({ length: 400 }, (_, i) => article(i, 'term'));
    const acknowledged: Article[] = [];
    const unexpected: string[] = [];
    const send = async (item: Article) => {
      // Refused or cut-off requests reject; an answer must be a 200 and is then an acknowledgement.
      const res = await put(first, token, item);
      if (res.status !== 200) unexpected.push(`${item.item_id}: ${res.status} ${await res.text()}`);
      else acknowledged.push(item);
    };
    let late: Promise<unknown> = Promise.resolve();
    let terminated = false;
    const early = Promise.allSettled(
      items.slice(0, 300).map(async (item) => {
        await send(item);
        if (!terminated && acknowledged.length >= 50) {
          terminated = true;
          first.proc.kill('SIGTERM');
          // More requests while draining: on idle keep-alive connections they may still be served.
          late = Promise.allSettled(items.slice(300).map(send));
        }
      }),
    );
    await early;
    await late;
    assert.deepEqual(unexpected, [], 'every answered PUT answered 200');
    assert.equal(await exitCodeWithin(first, SHUTDOWN_BOUND_MS, 'SIGTERM'), 0, first.logs.join('\n'));
    assert.ok(!first.logs.some((l) => l.includes('cut off at shutdown')), 'in-flight requests were finished, not cut off');
    assert.ok(terminated && acknowledged.length >= 50);
    t2.diagnostic(`${acknowledged.length} of ${items.length} PUTs acknowledged around SIGTERM`);

    const second = disk.track(await startServer({ dataDir }));
    await assertAllReadable(second, await getToken(second, first.demoClient), acknowledged);
  });
});

test('kill -9 in the middle of 500 concurrent PUTs loses none that answered 200 (DESIGN.md invariant 2)', async (t) => {
  const disk = sharedDataDir();
  t.after(() => disk.close());
  const dataDir = disk.dataDir;
  const first = disk.track(await startServer({ dataDir }));
  const token = await getToken(first);

  const items = Array.from({ length: 500 }, (_, i) => article(i, 'kill'));
  const acknowledged: Article[] = [];
  const unexpected: string[] = [];
  let killed = false;
  const WAVE = 100;
  for (let start = 0; start < items.length && !killed; start += WAVE) {
    await Promise.allSettled(
      items.slice(start, start + WAVE).map(async (item) => {
        // A request cut off by the kill rejects; one whose status line arrived was acknowledged.
        const res = await put(first, token, item);
        if (res.status !== 200) {
          unexpected.push(`${item.item_id}: ${res.status} ${await res.text()}`);
          return;
        }
        acknowledged.push(item);
        if (!killed && acknowledged.length >= 200) {
          killed = true;
          first.proc.kill('SIGKILL');
        }
      }),
    );
  }
  assert.deepEqual(unexpected, [], 'every answered PUT answered 200');
  assert.ok(killed, 'the process was killed while PUTs were in flight');
  await first.exited;
  assert.equal(first.proc.signalCode, 'SIGKILL');
  assert.ok(acknowledged.length >= 200);
  t.diagnostic(`${acknowledged.length} of ${items.length} PUTs acknowledged before kill -9`);

  const second = disk.track(await startServer({ dataDir }));
  await assertAllReadable(second, await getToken(second, first.demoClient), acknowledged);
});
