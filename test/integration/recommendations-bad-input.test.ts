// POST /{environment}/recommendations/requests with bad input against the real server: every
// case answers its status with an RFC 9457 problem body whose `errors[].path` names the field at
// fault, and stores nothing (every LMDB database compared before and after). The server has a
// second environment, `shop`, for tokens of another environment, and a small body limit.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { getToken, runCli } from '../helpers/auth.ts';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';
import { assertProblem, type Problem } from '../helpers/problem.ts';


type Body = Record<string, unknown>;

const MAX_BODY_BYTES = 8192;
const CONFIG = { environments: { demo: DEFAULT_CONFIG.environments.demo, shop: { itemTypes: ['product'], lists: { popular: { strategy: 'popular', itemTypes: [] } } } } };

/** A valid request; `extra` adds or overrides fields (undefined removes one). */
function body(extra: Body = {}): Body {
  const base: Body = { page_type: 'home', channel: 'www', device_id: 'device-1', lists: [{ list_name: 'latest', list_size: 3 }] };
  return Object.fromEntries(Object.entries({ ...base, ...extra }).filter(([, v]) => v !== undefined));
}
const list = (extra: Body = {}): Body => ({ list_name: 'latest', list_size: 3, ...extra });
const history = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `seen-${i}`, item_type: 'article', timestamp: 1_700_000_000 + i }));

/** [test name, body, [path, message pattern] the errors must include] — all answer 400 invalid-request. */
const INVALID: Array<[string, Body | unknown, Array<[string, RegExp]>]> = [
  ['without page_type', body({ page_type: undefined }), [['/page_type', /required/]]],
  ['without channel', body({ channel: undefined }), [['/channel', /required/]]],
  ['without device_id', body({ device_id: undefined }), [['/device_id', /required/]]],
  ['without lists', body({ lists: undefined }), [['/lists', /required/]]],
  ['with every required field missing', {}, [['/page_type', /required/], ['/channel', /required/], ['/device_id', /required/], ['/lists', /required/]]],
  ['with a page_type that is not configured', body({ page_type: 'shop-front' }), [['/page_type', /shop-front/]]],
  ['with a channel that is not configured', body({ channel: 'television' }), [['/channel', /television/]]],
  ['with a page_type that is not a string', body({ page_type: 7 }), [['/page_type', /string/]]],
  ['with an empty device_id', body({ device_id: '' }), [['/device_id', /fewer than 1|at least|must NOT/]]],
  ['with a user_id that is a number', body({ user_id: 42 }), [['/user_id', /type/]]],
  ['with an empty user_id', body({ user_id: '' }), [['/user_id', /type/]]],
  ['with lists empty', body({ lists: [] }), [['/lists', /fewer than 1/]]],
  ['with lists an object', body({ lists: { latest: 3 } }), [['/lists', /array/]]],
  ['with an unknown list_name', body({ lists: [list(), list({ list_name: 'editors_picks' })] }), [['/lists/1/list_name', /editors_picks/]]],
  ['with a list_name twice without alias', body({ lists: [list(), list()] }), [['/lists/0/alias', /required/], ['/lists/1/alias', /required/]]],
  ['with a list_name twice and one alias', body({ lists: [list({ alias: 'a' }), list()] }), [['/lists/1/alias', /required/]]],
  ['with one alias on two lists', body({ lists: [list({ alias: 'a' }), list({ alias: 'a' })] }), [['/lists/1/alias', /'a'/]]],
  ['without list_size', body({ lists: [{ list_name: 'latest' }] }), [['/lists/0/list_size', /required/]]],
  ['with list_size 0', body({ lists: [list({ list_size: 0 })] }), [['/lists/0/list_size', />= 1/]]],
  ['with a negative list_size', body({ lists: [list({ list_size: -3 })] }), [['/lists/0/list_size', />= 1/]]],
  ['with a fractional list_size', body({ lists: [list({ list_size: 2.5 })] }), [['/lists/0/list_size', /integer/]]],
  ['with list_size a string', body({ lists: [list({ list_size: '3' })] }), [['/lists/0/list_size', /integer/]]],
  ['with list_size over the maximum', body({ lists: [list({ list_size: DEFAULT_CONFIG.recommend.maxListSize + 1 })] }), [['/lists/0/list_size', /at most 1000/]]],
  ['with limit greater than list_size', body({ lists: [list({ list_size: 3, limit: 4 })] }), [['/lists/0/limit', /list_size/]]],
  ['with a negative limit', body({ lists: [list({ limit: -1 })] }), [['/lists/0/limit', />= 0/]]],
  ['with a fractional limit', body({ lists: [list({ limit: 1.5 })] }), [['/lists/0/limit', /integer/]]],
  ['on an article_detail page without context_item', body({ page_type: 'article_detail' }), [['/context_item', /article_detail/]]],
  ['on a product_detail page without context_item', body({ page_type: 'product_detail' }), [['/context_item', /product_detail/]]],
  ['on a video_detail page with context_item_type but no context_item', body({ page_type: 'video_detail', context_item_type: 'video' }), [['/context_item', /required/]]],
  ['with an unknown context_item_type', body({ page_type: 'article_detail', context_item: 'seed-1', context_item_type: 'podcast' }), [['/context_item_type', /podcast/]]],
  ['with a context_item that is not a string', body({ page_type: 'article_detail', context_item: 12 }), [['/context_item', /string/]]],
  ['with 51 entries in one history', body({ histories: { recent: history(51) } }), [['/histories/recent', /more than 50/]]],
  ['with a history that is not an array', body({ histories: { recent: { id: 'x' } } }), [['/histories/recent', /array/]]],
  ['with a history entry whose id is a number', body({ histories: { recent: [{ id: 17 }] } }), [['/histories/recent/0/id', /string/]]],
  ['with a history entry whose reconsumable is a string', body({ histories: { recent: [{ id: 'x', reconsumable: 'true' }] } }), [['/histories/recent/0/reconsumable', /boolean/]]],
  ['with a history entry whose timestamp is a string', body({ histories: { recent: [{ id: 'x', timestamp: '2024-01-01T00:00:00Z' }] } }), [['/histories/recent/0/timestamp', /integer/]]],
  ['with a history entry whose timestamp is fractional', body({ histories: { recent: [{ id: 'x', timestamp: 1.5 }] } }), [['/histories/recent/0/timestamp', /integer/]]],
  ['with a history entry without id', body({ histories: { recent: [{ item_type: 'article' }] } }), [['/histories/recent/0/id', /required/]]],
  ['with a history entry of an unknown item type', body({ histories: { recent: [{ id: 'x', item_type: 'podcast' }] } }), [['/histories/recent/0/item_type', /podcast/]]],
  ['with a history entry with an unknown field', body({ histories: { recent: [{ id: 'x', seen: true }] } }), [['/histories/recent/0/seen', /not a field/]]],
  [
    'with a list_content id that is not in the catalog',
    body({ lists: [list(), list({ list_name: 'popular', list_content: [{ id: 'seed-1' }, { id: 'never-stored' }] })] }),
    [['/lists/1/list_content/1/id', /never-stored/]],
  ],
  ['with a list_content id of another item type', body({ lists: [list({ list_content: [{ id: 'seed-1', item_type: 'video' }] })] }), [['/lists/0/list_content/0/id', /seed-1/]]],
  ['with a list_content rank beyond list_size', body({ lists: [list({ list_size: 3, list_content: [{ id: 'seed-1', rank: 4 }] })] }), [['/lists/0/list_content/0/rank', /beyond/]]],
  ['with a list_content rank 0', body({ lists: [list({ list_content: [{ id: 'seed-1', rank: 0 }] })] }), [['/lists/0/list_content/0/rank', />= 1/]]],
  ['with two list_content items at one rank', body({ lists: [list({ list_content: [{ id: 'seed-1', rank: 2 }, { id: 'seed-2', rank: 2 }] })] }), [['/lists/0/list_content/1/rank', /taken/]]],
  ['with more list_content items than list_size', body({ lists: [list({ list_size: 1, list_content: [{ id: 'seed-1' }, { id: 'seed-2' }] })] }), [['/lists/0/list_content', /more items/]]],
  ['with a list_content item without id', body({ lists: [list({ list_content: [{ rank: 1 }] })] }), [['/lists/0/list_content/0/id', /required/]]],
  ['with an unknown top-level field', body({ colour: 'red' }), [['/colour', /not a field/]]],
  ['with an unknown list field', body({ lists: [list({ size: 3 })] }), [['/lists/0/size', /not a field/]]],
  ['with filters with an unknown field', body({ lists: [list({ filters: { colour: 'red' } })] }), [['/lists/0/filters/colour', /not a field/]]],
  ['with filters on an item_attributes key that is not configured', body({ lists: [list({ filters: { item_attributes: { author: 'ann' } } })] }), [['/lists/0/filters/item_attributes/author', /filterAttributes/]]],
  ['with filters on an unknown item_type', body({ lists: [list({ filters: { item_type: ['article', 'podcast'] } })] }), [['/lists/0/filters/item_type', /podcast/]]],
  ['with filters whose flags are not an array', body({ lists: [list({ filters: { flags: 'premium' } })] }), [['/lists/0/filters/flags', /array/]]],
  ['with an unknown user_group', body({ user_group: 'beta-testers' }), [['/user_group', /beta-testers/]]],
  ['with exclude that is not an array', body({ exclude: 'seed-1' }), [['/exclude', /array/]]],
  ['with a JSON array body', [body()], [['', /object/]]],
  ['with a JSON null body', null, [['', /object/]]],
  ['with several faults, naming each', body({ channel: 'television', lists: [list({ list_size: 0 })], colour: 'red' }), [['/colour', /not a field/], ['/lists/0/list_size', />= 1/]]],
];

describe('recommendation request bad input', () => {
  let server: TestServer;
  let configDir: string;
  let token: string;
  let shopToken: string;

  /** POSTs `payload` with `auth` as the Authorization header (null: none). */
  const post = (payload: string | ReadableStream | undefined, auth: string | null = `Bearer ${token}`, environment = 'demo') =>
    fetch(`${server.url}/api/${environment}/recommendations/requests`, {
      method: 'POST',
      headers: { ...(auth === null ? {} : { Authorization: auth }), 'Content-Type': 'application/json' },
      ...(payload === undefined ? {} : { body: payload }),
      ...(payload instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as RequestInit);


  /** Sends, checks the answer with `check`, and asserts that every stored record is unchanged. */
  async function assertNothingStored(send: () => Promise<Response>, check: (res: Response) => Promise<unknown>): Promise<void> {
    const stored = await snapshotStore(server.dataDir);
    await check(await send());
    assertSameStore(await snapshotStore(server.dataDir), stored, 'the store is unchanged');
  }

  before(async () => {
    configDir = tempDir('affinity-config-');
    const configFile = join(configDir, 'config.json');
    writeFileSync(configFile, JSON.stringify(CONFIG));
    server = await startServer({ env: { AFFINITY_CONFIG: configFile, AFFINITY_MAX_BODY_BYTES: String(MAX_BODY_BYTES) } });
    const out = await runCli(['client', 'create', '--env', 'shop'], { AFFINITY_DATA_DIR: server.dataDir, AFFINITY_CONFIG: configFile });
    assert.equal(out.code, 0, out.stderr);
    const shop = JSON.parse(out.stdout) as { client_id: string; client_secret: string };
    [token, shopToken] = await Promise.all([getToken(server), getToken(server, { clientId: shop.client_id, clientSecret: shop.client_secret })]);
    for (const id of ['seed-1', 'seed-2', 'seed-3']) {
      const res = await fetch(`${server.url}/api/demo/items/article/${id}`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ environment: 'demo', item_id: id, item_type: 'article', title: id }),
      });
      assert.equal(res.status, 200);
    }
  });
  after(async () => {
    await server?.close();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  test('the valid base request answers 200 (so each case below fails for its own fault)', async () => {
    const res = await post(JSON.stringify(body({ lists: [list({ list_content: [{ id: 'seed-1', rank: 3 }] })] })));
    assert.equal(res.status, 200, await res.text());
  });

  test('a history of exactly 50 entries is accepted', async () => {
    const res = await post(JSON.stringify(body({ histories: { recent: history(50), older: history(50) } })));
    assert.equal(res.status, 200, await res.text());
  });

  describe('invalid requests answer 400 naming the field and store nothing', () => {
    for (const [name, payload, expected] of INVALID) {
      test(`a request ${name} answers 400 naming ${expected.map(([path]) => path).join(', ')}`, async () => {
        await assertNothingStored(
          () => post(JSON.stringify(payload)),
          async (res) => {
            const problem = await assertProblem(res, 400, 'invalid-request');
            const errors = problem.errors ?? [];
            assert.ok(errors.length > 0, 'field errors');
            for (const e of errors) assert.ok(typeof e.path === 'string' && typeof e.message === 'string' && e.message.length > 0);
            for (const [path, message] of expected) {
              assert.ok(
                errors.some((e) => e.path === path && message.test(e.message)),
                `an error for '${path}' matching ${message} in ${JSON.stringify(errors)}`,
              );
            }
          },
        );
      });
    }
  });

  describe('bodies that are not requests', () => {
    test('a body that is not JSON answers 400 body-not-json and stores nothing', async () => {
      await assertNothingStored(
        () => post('{"page_type": "home",'),
        async (res) => assert.equal((await assertProblem(res, 400, 'body-not-json')).errors, undefined),
      );
    });

    test('an empty body answers 400 body-required and stores nothing', async () => {
      await assertNothingStored(() => post(''), (res) => assertProblem(res, 400, 'body-required'));
    });

    test('no body at all answers 400 body-required', async () => {
      await assertProblem(await post(undefined), 400, 'body-required');
    });

    test('a body of 4000 nested arrays (under the size limit) answers 400 naming the body, and the server keeps answering', async () => {
      await assertNothingStored(
        () => post('['.repeat(4000) + ']'.repeat(4000)),
        async (res) => assert.equal((await assertProblem(res, 400, 'invalid-request')).errors?.[0]?.path, ''),
      );
      assert.equal((await fetch(`${server.url}/health`)).status, 200);
    });
  });

  describe(`body size limit (${MAX_BODY_BYTES} bytes)`, () => {
    /** A valid request of exactly `bytes` bytes (device_id padded). */
    const sized = (bytes: number) => {
      const base = JSON.stringify(body({ device_id: '' }));
      return JSON.stringify(body({ device_id: 'd'.repeat(bytes - base.length) }));
    };

    test('a body over the limit answers 413 body-too-large and stores nothing', async () => {
      await assertNothingStored(
        () => post(sized(4 * MAX_BODY_BYTES)),
        async (res) => assert.match((await assertProblem(res, 413, 'body-too-large')).detail, new RegExp(`${MAX_BODY_BYTES} bytes`)),
      );
    });

    test('a chunked body (no Content-Length) over the limit answers 413', async () => {
      await assertProblem(await post(new Blob([sized(2 * MAX_BODY_BYTES)]).stream()), 413, 'body-too-large');
    });

    test('a body one byte over the limit answers 413, and one of exactly the limit is read (and refused only for its too-long device_id)', async () => {
      const over = sized(MAX_BODY_BYTES + 1);
      assert.equal(Buffer.byteLength(over), MAX_BODY_BYTES + 1);
      await assertProblem(await post(over), 413, 'body-too-large');
      const exact = sized(MAX_BODY_BYTES);
      assert.equal(Buffer.byteLength(exact), MAX_BODY_BYTES);
      const problem = await assertProblem(await post(exact), 400, 'invalid-request');
      assert.ok(problem.errors?.some((e) => e.path === '/device_id'), JSON.stringify(problem.errors));
    });
  });

  describe('authorization', () => {
    const valid = () => JSON.stringify(body());
    const cases: Array<[string, () => string | null, RegExp]> = [
      ['without a token', () => null, /missing/i],
      ['with a token of another environment', () => `Bearer ${shopToken}`, /demo/],
      ['with a token that is not a JWT', () => 'Bearer not.a.token', /token/i],
      ['with Basic credentials instead of a Bearer token', () => `Basic ${Buffer.from('a:b').toString('base64')}`, /./],
    ];
    for (const [name, auth, detail] of cases) {
      test(`a request ${name} answers 401 with WWW-Authenticate and stores nothing`, async () => {
        await assertNothingStored(
          () => post(valid(), auth()),
          async (res) => {
            assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer\b/);
            assert.match((await assertProblem(res, 401, 'unauthorized')).detail, detail);
          },
        );
      });
    }

    test("the other environment's token works on its own environment", async () => {
      const res = await post(JSON.stringify(body({ lists: [{ list_name: 'popular', list_size: 2 }] })), `Bearer ${shopToken}`, 'shop');
      assert.equal(res.status, 200, await res.text());
    });

    test('a demo token on the other environment answers 401', async () => {
      await assertProblem(await post(JSON.stringify(body({ lists: [{ list_name: 'popular', list_size: 2 }] })), `Bearer ${token}`, 'shop'), 401, 'unauthorized');
    });
  });

  test('after every bad input no request answered a 5xx and /health answers 200', async () => {
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
    // respond.ts logs every 5xx with kind 'internal'.
    assert.deepEqual(server.logs.filter((line) => line.includes('"kind":"internal"')), []);
  });
});
