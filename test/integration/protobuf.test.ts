// The protobuf wire format (proto/affinity.proto) on the events and recommendation endpoints,
// with a client built from the published .proto by protobufjs: the same acceptance, the same
// validation errors as JSON, undecodable bodies refused with 400 and nothing stored, and
// recommendation answers in protobuf equal to the JSON ones.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import protobuf from 'protobufjs';
import { getToken } from '../helpers/auth.ts';
import { assertProblem } from '../helpers/problem.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

const PROTO = protobuf.parse(readFileSync(join(import.meta.dirname, '..', '..', 'proto', 'affinity.proto'), 'utf8'), { keepCase: true }).root;
const EventBatch = PROTO.lookupType('affinity.v1.EventBatch');
const RecommendationRequest = PROTO.lookupType('affinity.v1.RecommendationRequest');
const RecommendationResponse = PROTO.lookupType('affinity.v1.RecommendationResponse');
const encode = (type: protobuf.Type, value: Record<string, unknown>) => type.encode(type.fromObject(value)).finish();

const PROTOBUF = { 'Content-Type': 'application/x-protobuf' };

function detailView(id: string, item: string) {
  return { event_type: 'detail_pageview', event_id: id, page_type: 'article_detail', device_id: 'pb-dev', user_id: 'pb-user', channel: 'www-desktop', action_item: item, action_item_type: 'article' };
}

describe('protobuf bodies and answers', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startServer();
    token = await getToken(server);
    for (const id of ['pb-a', 'pb-b', 'pb-c']) {
      const res = await fetch(`${server.url}/api/demo/items/article/${id}`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ environment: 'demo', item_id: id, item_type: 'article', title: id, categories: [['news']] }),
      });
      assert.equal(res.status, 200);
    }
  });
  after(() => server.close());

  const post = (path: string, body: Uint8Array | string, headers: Record<string, string>) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, ...headers }, body });

  test('an EventBatch is accepted and stored as the JSON batch would be', async () => {
    const events = [detailView('pb-1', 'pb-a'), { ...detailView('pb-2', 'pb-b'), event_type: 'add_to_cart', page_type: 'product_detail', amount: 2, basket_content: [{ id: 'pb-b', quantity: 2 }] }];
    const res = await post('/api/demo/events', encode(EventBatch, { events }), PROTOBUF);
    assert.equal(res.status, 200, await res.text());
    const recent = await fetch(`${server.url}/api/demo/events?limit=10`, { headers: { Authorization: `Bearer ${token}` } });
    const stored = ((await recent.json()) as { events: Array<Record<string, unknown>> }).events.filter((e) => String(e.event_id).startsWith('pb-'));
    assert.deepEqual(stored.map(({ accepted_at: _, ...e }) => e).sort((a, b) => String(a.event_id).localeCompare(String(b.event_id))), events);
  });

  test('an EventBatch with an invalid event gets the same 400 problem as JSON and stores nothing', async () => {
    const before = await snapshotStore(server.dataDir);
    const events = [detailView('pb-bad-1', 'pb-a'), { event_type: 'purchase', device_id: 'x', channel: 'www-desktop' }];
    const viaProtobuf = await assertProblem(await post('/api/demo/events', encode(EventBatch, { events }), PROTOBUF), 400, 'invalid-events');
    const viaJson = await assertProblem(await post('/api/demo/events', JSON.stringify({ events }), { 'Content-Type': 'application/json' }), 400, 'invalid-events');
    assert.deepEqual(viaProtobuf.errors, viaJson.errors);
    assert.equal(viaProtobuf.title, viaJson.title);
    assertSameStore(await snapshotStore(server.dataDir), before, 'the store is unchanged');
  });

  test('a protobuf body that does not decode answers 400 and stores nothing', async () => {
    const before = await snapshotStore(server.dataDir);
    const garbage = Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    const events = await assertProblem(await post('/api/demo/events', garbage, PROTOBUF), 400, 'invalid-request');
    assert.match(events.detail, /not a valid affinity\.v1\.EventBatch protobuf message/);
    const rec = await assertProblem(await post('/api/demo/recommendations/requests', garbage, PROTOBUF), 400, 'invalid-request');
    assert.match(rec.detail, /not a valid affinity\.v1\.RecommendationRequest protobuf message/);
    await assertProblem(await post('/api/demo/events', new Uint8Array(0), PROTOBUF), 400, 'body-required');
    assertSameStore(await snapshotStore(server.dataDir), before, 'the store is unchanged');
  });

  test('a RecommendationRequest answered in protobuf equals the JSON answer', async () => {
    const request = {
      page_type: 'home',
      channel: 'www-desktop',
      device_id: 'pb-dev',
      user_id: 'pb-user',
      lists: [{ list_name: 'popular', list_size: 3, filters: { categories: [{ path: ['news'] }] } }, { list_name: 'latest', list_size: 2, alias: 'newest' }],
      histories: { recent: { items: [{ id: 'pb-a', item_type: 'article' }] } },
    };
    const res = await post('/api/demo/recommendations/requests', encode(RecommendationRequest, request), { ...PROTOBUF, Accept: 'application/x-protobuf' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-protobuf');
    const decoded = RecommendationResponse.toObject(RecommendationResponse.decode(new Uint8Array(await res.arrayBuffer())), { longs: Number, defaults: true, arrays: true });

    const jsonRequest = { ...request, lists: [{ ...request.lists[0]!, filters: { categories: [['news']] } }, request.lists[1]!], histories: { recent: [{ id: 'pb-a', item_type: 'article' }] } };
    const json = await post('/api/demo/recommendations/requests', JSON.stringify(jsonRequest), { 'Content-Type': 'application/json' });
    assert.equal(json.status, 200);
    const expected = (await json.json()) as { user_group: string; device_id: string; lists: Array<{ list_name: string; alias?: string; list_size: number; limit: number; items: Array<{ item_id: string; rank: number }> }> };
    const strip = (lists: typeof expected.lists) => lists.map((l) => ({ list_name: l.list_name, alias: l.alias ?? '', list_size: l.list_size, limit: l.limit, items: l.items.map((i) => ({ item_id: i.item_id, rank: i.rank })) }));
    assert.equal(decoded.device_id, expected.device_id);
    assert.equal(decoded.user_group, expected.user_group);
    assert.match(String(decoded.request_id), /^[0-9a-f-]{36}$/);
    assert.deepEqual(strip(decoded.lists as typeof expected.lists), strip(expected.lists));
    assert.ok((expected.lists[0]?.items.length ?? 0) > 0, 'the lists are not empty');
  });

  test('a RecommendationRequest failing validation gets the JSON request\'s 400 problem', async () => {
    const request = { page_type: 'home', channel: 'www-desktop', device_id: 'pb-dev', lists: [{ list_name: 'no_such_list', list_size: 3 }] };
    const viaProtobuf = await assertProblem(await post('/api/demo/recommendations/requests', encode(RecommendationRequest, request), PROTOBUF), 400, 'invalid-request');
    const viaJson = await assertProblem(await post('/api/demo/recommendations/requests', JSON.stringify(request), { 'Content-Type': 'application/json' }), 400, 'invalid-request');
    assert.deepEqual(viaProtobuf.errors, viaJson.errors);
  });
});
