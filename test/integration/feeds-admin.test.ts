// Feeds as an operator manages them: declared in the configuration file (synced at start,
// read-only at run time), added, replaced and removed by API and CLI, kept in LMDB across
// restarts with their status, and polled on request from the CLI through the running server.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { apiClient } from '../helpers/api.ts';
import { getToken, runCli } from '../helpers/auth.ts';
import { startFeedServer } from '../helpers/feed-server.ts';
import { sharedDataDir, startServer, tempDir } from '../helpers/server.ts';

interface FeedView {
  feed_id: string;
  source: string;
  url: string;
  interval: string;
  status: { state: string; polls: number; created?: number };
}

const RSS = (ids: string[]) => `<rss version="2.0"><channel>${ids.map((id) => `<item><guid>${id}</guid><title>${id}</title></item>`).join('')}</channel></rss>`;

test('configured and operator-added feeds: sync at start, read-only config feeds, persistence across restarts, and the CLI', async (t) => {
  const feeds = await startFeedServer();
  t.after(() => feeds.close());
  feeds.route('/a.rss', { headers: { 'Content-Type': 'application/rss+xml' }, body: RSS(['adm-a1']) });
  feeds.route('/b.rss', { headers: { 'Content-Type': 'application/rss+xml' }, body: RSS(['adm-b1', 'adm-b2']) });
  const configDir = tempDir('affinity-config-');
  const configFile = join(configDir, 'config.json');
  const writeConfig = (feedsOfDemo: Record<string, unknown>) =>
    writeFileSync(configFile, JSON.stringify({ environments: { demo: { itemTypes: ['article', 'video', 'product'], feeds: feedsOfDemo, outbound: { allow: ['127.0.0.1'] } } } }));
  writeConfig({ news: { url: `${feeds.url}/a.rss`, format: 'rss', itemType: 'article', interval: '1h' } });
  const shared = sharedDataDir();
  t.after(() => shared.close());
  const env = { AFFINITY_CONFIG: configFile, AFFINITY_DATA_DIR: shared.dataDir };

  const first = shared.track(await startServer({ dataDir: shared.dataDir, env }));
  const client = first.demoClient!;
  let api = apiClient(first, await getToken(first, client));

  await t.test('a feed of the configuration file is listed as source config and is read-only', async () => {
    const list = await api<{ feeds: FeedView[] }>('GET', '/api/demo/feeds');
    assert.deepEqual(list.body.feeds.map((f) => [f.feed_id, f.source, f.interval]), [['news', 'config', '1h']]);
    assert.equal((await api('DELETE', '/api/demo/feeds/news')).status, 409);
    const polled = await api<FeedView>('POST', '/api/demo/feeds/news/poll');
    assert.equal(polled.body.status.state, 'applied');
  });

  await t.test('PUT creates a feed under its id (201), then replaces it (200); DELETE removes it', async () => {
    const body = { url: `${feeds.url}/b.rss`, format: 'rss', item_type: 'article', interval: '2h' };
    const created = await api<FeedView>('PUT', '/api/demo/feeds/put-me', body);
    assert.equal(created.status, 201);
    assert.equal(created.body.source, 'api');
    const replaced = await api<FeedView>('PUT', '/api/demo/feeds/put-me', { ...body, interval: '90s' });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.interval, '90s');
    assert.equal((await api('DELETE', '/api/demo/feeds/put-me')).status, 200);
    assert.equal((await api('GET', '/api/demo/feeds/put-me')).status, 404);
  });

  await t.test('feed add, list, status, poll and remove work from the CLI beside the running server', async () => {
    const add = await runCli(['feed', 'add', '--env', 'demo', '--url', `${feeds.url}/b.rss`, '--format', 'rss', '--item-type', 'article', '--interval', '1h', '--id', 'cli-b'], env);
    assert.equal(add.code, 0, add.stderr);
    const added = JSON.parse(add.stdout) as FeedView;
    assert.equal(added.feed_id, 'cli-b');
    assert.equal(added.source, 'api');

    const list = await runCli(['feed', 'list', '--env', 'demo'], env);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(list.stdout.trim().split('\n').map((l) => (JSON.parse(l) as FeedView).feed_id), ['cli-b', 'news']);

    const poll = await runCli(['feed', 'poll', '--env', 'demo', 'cli-b', '--timeout', '30'], env);
    assert.equal(poll.code, 0, poll.stderr);
    const polled = JSON.parse(poll.stdout) as FeedView;
    // The scheduler may have polled the new feed already (it was due at once): then this poll finds the same body.
    assert.ok(['applied', 'unchanged'].includes(polled.status.state), polled.status.state);
    assert.equal((await api('GET', '/api/demo/items/article/adm-b2')).status, 200, 'the running server polled it');

    const status = await runCli(['feed', 'status', '--env', 'demo', 'cli-b'], env);
    assert.equal(status.code, 0, status.stderr);
    assert.ok((JSON.parse(status.stdout) as FeedView).status.polls >= 1);

    const duplicate = await runCli(['feed', 'add', '--env', 'demo', '--url', `${feeds.url}/b.rss`, '--format', 'rss', '--item-type', 'article', '--id', 'cli-b'], env);
    assert.equal(duplicate.code, 1);
    assert.match(duplicate.stderr, /already exists/);
    const invalid = await runCli(['feed', 'add', '--env', 'demo', '--url', 'ftp://x', '--format', 'rss', '--item-type', 'podcast'], env);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /url must be an http or https URL/);
    assert.match(invalid.stderr, /item_type 'podcast' is not an item type/);
    const removeConfigured = await runCli(['feed', 'remove', '--env', 'demo', 'news'], env);
    assert.equal(removeConfigured.code, 1);
    assert.match(removeConfigured.stderr, /configuration file/);

    const remove = await runCli(['feed', 'remove', '--env', 'demo', 'cli-b'], env);
    assert.equal(remove.code, 0, remove.stderr);
    assert.deepEqual(JSON.parse(remove.stdout), { feed_id: 'cli-b', removed: true });
    assert.equal((await api('GET', '/api/demo/feeds/cli-b')).status, 404);
  });

  await t.test('operator feeds and their status survive a restart; the configuration file decides the config feeds', async () => {
    const add = await api('POST', '/api/demo/feeds', { feed_id: 'kept', url: `${feeds.url}/b.rss`, format: 'rss', item_type: 'video', interval: '1h' });
    assert.equal(add.status, 201);
    assert.equal((await api<FeedView>('POST', '/api/demo/feeds/kept/poll')).body.status.state, 'applied');
    assert.equal(await first.stop(), 0);

    writeConfig({ sport: { url: `${feeds.url}/a.rss`, format: 'rss', itemType: 'video', interval: '1d' } });
    const second = shared.track(await startServer({ dataDir: shared.dataDir, env }));
    api = apiClient(second, await getToken(second, client));
    const list = await api<{ feeds: FeedView[] }>('GET', '/api/demo/feeds');
    assert.deepEqual(list.body.feeds.map((f) => [f.feed_id, f.source]), [['kept', 'api'], ['sport', 'config']]);
    const kept = list.body.feeds.find((f) => f.feed_id === 'kept')!;
    assert.ok(kept.status.polls >= 1, 'the status was kept');
    assert.equal(kept.status.state, 'applied');
  });
});
