// Wire formats side by side on the main thread's share of a request: a batch of 10 events
// decoded and checked (JSON.parse vs protobuf decode, then the same checkEvent), and a
// recommendation answer of 2 lists × 10 items encoded (JSON.stringify vs protobuf encode).
// Body sizes are printed beside. Variants alternate over rounds; figures are medians of
// tinybench's per-task medians (ns per operation) and the protobuf/JSON ratio.
// Run: npm run bench -- wire-format   (BENCH_QUICK=1 short, BENCH_JSON=1 JSON lines)
import { cpus } from 'node:os';
import { Bench } from 'tinybench';
import { EVENT_CHANNELS, STANDARD_PAGE_TYPES, checkEvent, type EventVocabulary } from '../src/domain/event.ts';
import { ProtobufCodec } from '../src/http/protobuf.ts';
import protobuf from 'protobufjs';
import { readFileSync } from 'node:fs';
import { PROTO_PATH } from '../src/http/protobuf.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 2 : 5));
const TASK_TIME_MS = QUICK ? 100 : 500;

const codec = new ProtobufCodec();
const root = protobuf.parse(readFileSync(PROTO_PATH, 'utf8'), { keepCase: true }).root;
const EventBatch = root.lookupType('affinity.v1.EventBatch');
const vocabulary: EventVocabulary = { pageTypes: new Set(STANDARD_PAGE_TYPES), channels: new Set(EVENT_CHANNELS), listNames: new Set(['popular']) };

const events = Array.from({ length: 10 }, (_, i) => ({
  event_type: 'detail_pageview',
  event_id: `evt-${i}-0c5e2f7a`,
  page_type: 'article_detail',
  device_id: 'device-4f1b9a1c',
  user_id: 'user-83a0e9',
  channel: 'www-desktop',
  action_item: `article-${1000 + i}`,
  action_item_type: 'article',
}));
const jsonBody = Buffer.from(JSON.stringify({ events }));
const protobufBody = Buffer.from(EventBatch.encode(EventBatch.fromObject({ events })).finish());
const answer = {
  request_id: '01a2082f-c69f-7292-9bd2-cbad63d880d1',
  user_group: 'affinity',
  device_id: 'device-4f1b9a1c',
  user_id: 'user-83a0e9',
  lists: ['recommended_for_you', 'more_like_this'].map((name) => ({
    list_name: name,
    list_key: 'xBf0gNS2EuG2xXjrsVg1Cg',
    list_size: 10,
    limit: 10,
    items: Array.from({ length: 10 }, (_, i) => ({ item_id: `article-${2000 + i}`, rank: i + 1 })),
  })),
};

let sink = 0;
function checkAll(batch: { events?: unknown }): void {
  const list = batch.events as unknown[];
  for (let i = 0; i < list.length; i++) sink += checkEvent(list[i], vocabulary).length;
}

const TASKS: Record<string, () => void> = {
  'events/json/batch=10': () => checkAll(JSON.parse(jsonBody.toString('utf8')) as { events: unknown }),
  'events/protobuf/batch=10': () => checkAll(codec.decodeEvents(protobufBody)),
  'answer/json/2x10': () => {
    sink += Buffer.byteLength(JSON.stringify(answer));
  },
  'answer/protobuf/2x10': () => {
    sink += codec.encodeRecommendationResponse(answer).length;
  },
};

const medians = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  const names = round % 2 === 0 ? Object.keys(TASKS) : Object.keys(TASKS).reverse();
  const bench = new Bench({ time: TASK_TIME_MS, warmup: true });
  for (const name of names) bench.add(name, TASKS[name]!);
  await bench.run();
  for (const task of bench.tasks) {
    const result = task.result as { latency?: { p50?: number } } | undefined;
    const ns = (result?.latency?.p50 ?? NaN) * 1e6;
    medians.set(task.name, [...(medians.get(task.name) ?? []), ns]);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows = [...medians].map(([name, xs]) => ({ task: name, 'median ns/op': Math.round(median(xs)) }));
const ratio = (a: string, b: string) => (median(medians.get(a)!) / median(medians.get(b)!)).toFixed(2);
const answerProtobufBytes = codec.encodeRecommendationResponse(answer).length;
const answerJsonBytes = Buffer.byteLength(JSON.stringify(answer));
if (process.env.BENCH_JSON === '1') {
  for (const row of rows) console.log(JSON.stringify({ ...row, node: process.version, cpu: cpus()[0]?.model }));
} else {
  console.table(rows);
  console.log(`events batch of 10: JSON ${jsonBody.length} B, protobuf ${protobufBody.length} B; protobuf/JSON time ${ratio('events/protobuf/batch=10', 'events/json/batch=10')}`);
  console.log(`answer 2×10: JSON ${answerJsonBytes} B, protobuf ${answerProtobufBytes} B; protobuf/JSON time ${ratio('answer/protobuf/2x10', 'answer/json/2x10')}`);
}
if (sink === -1) console.log(sink);
