// The `new_for_you` strategy (strategies/new-for-you.ts) over HTTP: a real server whose demo
// environment has two lists of it, items put through the items API, the user's consumption
// through the events API. New items in the categories the user consumes come first, the
// more of the user's consumption their categories hold the higher; items older than maxAgeDays
// are not its own (the fallback may still bring them); a user without history gets the
// fallback (`latest`); consumed items never come back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { getToken } from '../helpers/auth.ts';
import { postAndApply, view } from '../helpers/events.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const DEMO = DEFAULT_CONFIG.environments.demo!;
const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
const NOW = Date.now();
const published = (msAgo: number) => new Date(NOW - msAgo).toISOString();

/** id → [category path, published how long ago]. */
const ITEMS: Record<string, [string[], number]> = {
  // What the user consumes: three tennis reports and a recipe, all old.
  seen_tennis_1: [['sport', 'tennis'], 90 * DAY_MS],
  seen_tennis_2: [['sport', 'tennis'], 91 * DAY_MS],
  seen_tennis_3: [['sport', 'tennis'], 92 * DAY_MS],
  seen_recipe: [['food', 'cooking'], 93 * DAY_MS],
  // New items: the recipe and the music piece are the newest of all.
  new_music: [['music'], 10 * 60_000],
  new_recipe: [['food', 'cooking'], 30 * 60_000],
  new_tennis_1: [['sport', 'tennis'], 1 * HOUR_MS],
  new_football: [['sport', 'football'], 3 * HOUR_MS],
  new_tennis_2: [['sport', 'tennis'], 2 * DAY_MS],
  // Tennis, but two months old.
  old_tennis: [['sport', 'tennis'], 60 * DAY_MS],
};

let server: TestServer;
let token: string;

before(async () => {
  server = await startServer({
    config: {
      environments: {
        demo: {
          ...DEMO,
          lists: {
            ...DEMO.lists,
            new_for_you: { strategy: 'new_for_you', itemTypes: [] },
            new_this_year: { strategy: 'new_for_you', itemTypes: [], options: { maxAgeDays: 365 } },
          },
        },
      },
    },
  });
  token = await getToken(server);
  for (const [id, [category, ago]] of Object.entries(ITEMS)) {
    const res = await fetch(`${server.url}/api/demo/items/article/${id}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ environment: 'demo', item_id: id, item_type: 'article', title: id, categories: [category], publication_datetime: published(ago) }),
    });
    assert.equal(res.status, 200, await res.text());
  }
  const seen = ['seen_tennis_1', 'seen_tennis_2', 'seen_tennis_3', 'seen_recipe'];
  await postAndApply(server.url, 'demo', seen.map((id) => view(id, 'fan')), seen.length);
});
after(() => server?.close());

async function list(listName: string, size: number, user?: string): Promise<string[]> {
  const res = await fetch(`${server.url}/api/demo/recommendations/requests`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ page_type: 'home', channel: 'www', device_id: `device-of-${user ?? 'nobody'}`, ...(user ? { user_id: user } : {}), lists: [{ list_name: listName, list_size: size }] }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return (JSON.parse(text) as { lists: Array<{ items: Array<{ item_id: string }> }> }).lists[0]!.items.map((i) => i.item_id);
}

test("new items in the user's categories come first, by the share of the user's consumption they hold", async () => {
  // Tennis (sport and sport/tennis: 3 of 4 items each) before football (sport only) before
  // cooking (1 of 4): the categories' share decides, recency orders the two tennis items.
  assert.deepEqual(await list('new_for_you', 4, 'fan'), ['new_tennis_1', 'new_tennis_2', 'new_football', 'new_recipe']);
});

test('the fallback fills the rest, and consumed items never come back', async () => {
  const ids = await list('new_for_you', 10, 'fan');
  assert.deepEqual(ids.slice(0, 4), ['new_tennis_1', 'new_tennis_2', 'new_football', 'new_recipe']);
  // Then `latest` (newest first) brings what new_for_you did not: the music piece, then the old tennis report.
  assert.deepEqual(ids.slice(4), ['new_music', 'old_tennis']);
  for (const id of ids) assert.ok(!id.startsWith('seen_'), `${id} was consumed by the user`);
});

test('maxAgeDays bounds what counts as new: a year brings the old tennis report before football', async () => {
  assert.deepEqual(await list('new_this_year', 5, 'fan'), ['new_tennis_1', 'new_tennis_2', 'old_tennis', 'new_football', 'new_recipe']);
});

test('a user without history gets the fallback: the latest items', async () => {
  assert.deepEqual(await list('new_for_you', 5, 'stranger'), await list('latest', 5, 'stranger2'));
  assert.deepEqual(await list('new_for_you', 3, 'stranger3'), ['new_music', 'new_recipe', 'new_tennis_1']);
});
