// Every bad input to the feed endpoints against the real server: the status, a problem body
// naming what is wrong, and a store that is byte for byte unchanged (feeds, their status and
// poll requests, the catalog).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiClient, waitFor, type Api } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { assertFieldErrors, assertProblem } from '../helpers/problem.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

/** A port nothing listens on: polls fail at once (retries are off in this suite). */
const DEAD_URL = 'http://127.0.0.1:9/feed.rss';
const VALID = { url: DEAD_URL, format: 'rss', item_type: 'article' };

interface BadInput {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  raw?: string;
  noToken?: boolean;
  status: number;
  kind: string;
  errors?: Array<[string, RegExp?]>;
}

const FEEDS = '/api/demo/feeds';
const CASES: BadInput[] = [
  { name: 'POST feed without a token answers 401', method: 'POST', path: FEEDS, body: VALID, noToken: true, status: 401, kind: 'unauthorized' },
  { name: 'POST feed for an environment the token does not grant answers 401', method: 'POST', path: '/api/other/feeds', body: VALID, status: 401, kind: 'unauthorized' },
  { name: 'POST feed with a non-JSON body answers 400', method: 'POST', path: FEEDS, raw: '{url:', status: 400, kind: 'body-not-json' },
  { name: 'POST feed without a body answers 400', method: 'POST', path: FEEDS, raw: '', status: 400, kind: 'body-required' },
  { name: 'POST feed with an array body answers 400 naming the body', method: 'POST', path: FEEDS, body: [VALID], status: 400, kind: 'invalid-request', errors: [['', /object/]] },
  {
    name: 'POST feed without url, format and item_type answers 400 naming each',
    method: 'POST',
    path: FEEDS,
    body: {},
    status: 400,
    kind: 'invalid-request',
    errors: [['/url', /required/], ['/format', /required/], ['/item_type', /required/]],
  },
  { name: 'POST feed with an unknown field answers 400 naming it', method: 'POST', path: FEEDS, body: { ...VALID, urll: 'x' }, status: 400, kind: 'invalid-request', errors: [['/urll', /not a field/]] },
  { name: 'POST feed with an unknown format answers 400', method: 'POST', path: FEEDS, body: { ...VALID, format: 'rdf' }, status: 400, kind: 'invalid-request', errors: [['/format']] },
  { name: 'POST feed with an item type the environment lacks answers 400', method: 'POST', path: FEEDS, body: { ...VALID, item_type: 'podcast' }, status: 400, kind: 'invalid-request', errors: [['/item_type', /not an item type/]] },
  { name: 'POST feed with an unreadable interval answers 400', method: 'POST', path: FEEDS, body: { ...VALID, interval: '15 minutes' }, status: 400, kind: 'invalid-request', errors: [['/interval', /duration/]] },
  { name: 'POST feed with a zero interval answers 400', method: 'POST', path: FEEDS, body: { ...VALID, interval: '0s' }, status: 400, kind: 'invalid-request', errors: [['/interval', /duration/]] },
  { name: 'POST feed with an ftp URL answers 400', method: 'POST', path: FEEDS, body: { ...VALID, url: 'ftp://example.com/f.rss' }, status: 400, kind: 'invalid-request', errors: [['/url', /http or https/]] },
  { name: 'POST feed with a relative URL answers 400', method: 'POST', path: FEEDS, body: { ...VALID, url: '/feed.rss' }, status: 400, kind: 'invalid-request', errors: [['/url', /absolute/]] },
  { name: 'POST feed with credentials in the URL answers 400', method: 'POST', path: FEEDS, body: { ...VALID, url: 'https://u:p@example.com/f' }, status: 400, kind: 'invalid-request', errors: [['/url', /auth_header/]] },
  { name: 'POST json feed without a mapping to item_id answers 400', method: 'POST', path: FEEDS, body: { ...VALID, format: 'json' }, status: 400, kind: 'invalid-request', errors: [['/mapping', /item_id/]] },
  {
    name: 'POST json feed mapping to a field a feed may not fill answers 400 naming the source',
    method: 'POST',
    path: FEEDS,
    body: { ...VALID, format: 'json', mapping: { id: 'item_id', env: 'environment' } },
    status: 400,
    kind: 'invalid-request',
    errors: [['/mapping/env', /not an Item field/]],
  },
  { name: 'POST rss feed with a mapping answers 400', method: 'POST', path: FEEDS, body: { ...VALID, mapping: { guid: 'item_id' } }, status: 400, kind: 'invalid-request', errors: [['/mapping', /json, xml and csv/]] },
  { name: 'POST xml feed without items_path answers 400', method: 'POST', path: FEEDS, body: { ...VALID, format: 'xml', mapping: { '@id': 'item_id' } }, status: 400, kind: 'invalid-request', errors: [['/items_path', /required/]] },
  { name: 'POST csv feed with items_path answers 400', method: 'POST', path: FEEDS, body: { ...VALID, format: 'csv', mapping: { id: 'item_id' }, items_path: 'a.b' }, status: 400, kind: 'invalid-request', errors: [['/items_path', /json and xml/]] },
  { name: 'POST feed with a header name that is not a token answers 400', method: 'POST', path: FEEDS, body: { ...VALID, auth_header: { name: 'X Token', value: 'v' } }, status: 400, kind: 'invalid-request', errors: [['/auth_header/name', /header name/]] },
  { name: 'POST feed with a line break in the header value answers 400', method: 'POST', path: FEEDS, body: { ...VALID, auth_header: { name: 'X-Token', value: 'a\r\nHost: evil' } }, status: 400, kind: 'invalid-request', errors: [['/auth_header/value', /line breaks/]] },
  { name: 'POST feed with a disable marker lacking its value answers 400', method: 'POST', path: FEEDS, body: { ...VALID, disable_marker: { field: 'category' } }, status: 400, kind: 'invalid-request', errors: [['/disable_marker/value', /required/]] },
  { name: 'POST feed with an invalid feed_id answers 400', method: 'POST', path: FEEDS, body: { ...VALID, feed_id: 'has space' }, status: 400, kind: 'invalid-request', errors: [['/feed_id']] },
  { name: 'POST feed with the id of an existing feed answers 409', method: 'POST', path: FEEDS, body: { ...VALID, feed_id: 'seed' }, status: 409, kind: 'conflict' },
  { name: 'POST feed with the id of a configured feed answers 409', method: 'POST', path: FEEDS, body: { ...VALID, feed_id: 'cfg' }, status: 409, kind: 'conflict' },
  { name: 'POST feed with a body over the limit answers 413', method: 'POST', path: FEEDS, raw: JSON.stringify({ ...VALID, url: `http://x/${'a'.repeat(1100 * 1024)}` }), status: 413, kind: 'body-too-large' },
  { name: 'PUT a configured feed answers 409', method: 'PUT', path: `${FEEDS}/cfg`, body: VALID, status: 409, kind: 'conflict' },
  { name: 'PUT feed with an invalid body answers 400', method: 'PUT', path: `${FEEDS}/seed`, body: { ...VALID, format: 'yaml' }, status: 400, kind: 'invalid-request', errors: [['/format']] },
  { name: 'PUT feed whose body names another feed_id answers 400', method: 'PUT', path: `${FEEDS}/seed`, body: { ...VALID, feed_id: 'other' }, status: 400, kind: 'invalid-request', errors: [['/feed_id', /differs/]] },
  { name: 'PUT feed with an invalid id in the path answers 400', method: 'PUT', path: `${FEEDS}/bad%20id`, body: VALID, status: 400, kind: 'invalid-request', errors: [['feed_id']] },
  { name: 'GET an unknown feed answers 404', method: 'GET', path: `${FEEDS}/nope`, status: 404, kind: 'feed-not-found' },
  { name: 'GET a feed with an id of 5000 characters answers 404', method: 'GET', path: `${FEEDS}/${'x'.repeat(5000)}`, status: 404, kind: 'feed-not-found' },
  { name: 'DELETE an unknown feed answers 404', method: 'DELETE', path: `${FEEDS}/nope`, status: 404, kind: 'feed-not-found' },
  { name: 'DELETE a configured feed answers 409', method: 'DELETE', path: `${FEEDS}/cfg`, status: 409, kind: 'conflict' },
  { name: 'POST poll of an unknown feed answers 404', method: 'POST', path: `${FEEDS}/nope/poll`, status: 404, kind: 'feed-not-found' },
  { name: 'GET feeds without a token answers 401', method: 'GET', path: FEEDS, noToken: true, status: 401, kind: 'unauthorized' },
  { name: 'PATCH a feed answers 405', method: 'PATCH', path: `${FEEDS}/seed`, body: VALID, status: 405, kind: 'method-not-allowed' },
];

let server: TestServer;
let api: Api;
let token: string;

before(async () => {
  server = await startServer({
    config: {
      ingest: { feeds: { retries: 0 } },
      environments: {
        demo: {
          itemTypes: ['article', 'video', 'product'],
          feeds: { cfg: { url: DEAD_URL, format: 'rss', itemType: 'article', interval: '1d' } },
          outbound: { allow: ['127.0.0.1'] },
        },
        other: { itemTypes: ['article'] },
      },
    },
  });
  token = await getToken(server);
  api = apiClient(server, token);
  assert.equal((await api('POST', FEEDS, { ...VALID, feed_id: 'seed', interval: '1d' })).status, 201);
  // Both feeds are polled once right away (never polled yet): the snapshots start after that.
  for (const id of ['seed', 'cfg']) {
    await waitFor(`the first poll of ${id}`, async () => ((await api<{ status: { polls: number } }>('GET', `${FEEDS}/${id}`)).body.status.polls >= 1 ? true : undefined));
  }
});
after(() => server?.close());

describe('feed endpoints refuse bad input and change nothing', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const before = await snapshotStore(server.dataDir);
      const headers: Record<string, string> = c.noToken ? {} : { Authorization: `Bearer ${token}` };
      const init: RequestInit = { method: c.method, headers };
      if (c.raw !== undefined || c.body !== undefined) {
        init.body = c.raw ?? JSON.stringify(c.body);
        headers['Content-Type'] = 'application/json';
      }
      const res = await fetch(`${server.url}${c.path}`, init);
      const problem = await assertProblem(res, c.status, c.kind);
      if (c.errors) assertFieldErrors(problem, c.errors);
      else assert.equal(problem.errors, undefined, JSON.stringify(problem.errors));
      assertSameStore(await snapshotStore(server.dataDir), before, 'the store is unchanged');
    });
  }
});
