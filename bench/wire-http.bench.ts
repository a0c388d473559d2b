// The same batch of 10 events POSTed over HTTP as JSON and as protobuf (proto/affinity.proto),
// 64 connections, every 200 durable: what the wire format changes end to end, beside the codec
// costs of bench/wire-format.bench.ts. One server per round, variants alternating, server pinned
// to core 0 and wrk to core 1 (as bench/events.bench.ts).
// Run: npm run bench -- wire-http   (needs wrk)   BENCH_QUICK=1 short, BENCH_ROUNDS=n
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { PROTO_PATH } from '../src/http/protobuf.ts';
import { startServer } from '../test/helpers/server.ts';
import { failures, parseWrkResult, requestsPerSec, type WrkResult } from './wrk-result.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const SECONDS = QUICK ? 3 : 8;
const PIN = availableParallelism() >= 2;

const root = protobuf.parse(readFileSync(PROTO_PATH, 'utf8'), { keepCase: true }).root;
const EventBatch = root.lookupType('affinity.v1.EventBatch');
const events = Array.from({ length: 10 }, (_, i) => ({
  event_type: 'detail_pageview',
  page_type: 'article_detail',
  device_id: `device-${i}`,
  user_id: `user-${i}`,
  channel: 'www-desktop',
  action_item: `article-${1000 + i}`,
  action_item_type: 'article',
}));
const dir = mkdtempSync(join(tmpdir(), 'affinity-wire-'));
const FILES = {
  json: { type: 'application/json', file: join(dir, 'batch.json') },
  protobuf: { type: 'application/x-protobuf', file: join(dir, 'batch.pb') },
};
writeFileSync(FILES.json.file, JSON.stringify({ events }));
writeFileSync(FILES.protobuf.file, EventBatch.encode(EventBatch.fromObject({ events })).finish());

function wrk(url: string, variant: keyof typeof FILES, seconds: number): WrkResult {
  const { type, file } = FILES[variant];
  const args = ['-t1', '-c64', `-d${seconds}s`, '--timeout', '5s', '-s', join(import.meta.dirname, 'wrk', 'post-body-file.lua'), url, '--', '/api/demo/events', type, file];
  const [command, argv] = PIN ? ['taskset', ['-c', '1', 'wrk', ...args]] : ['wrk', args];
  const r = spawnSync(command, argv, { encoding: 'utf8' });
  const result = parseWrkResult(r.stdout);
  if (r.status !== 0 || !result) throw new Error(`wrk failed (${r.status}): ${r.stdout}\n${r.stderr}`);
  return result;
}

const results: Record<keyof typeof FILES, WrkResult[]> = { json: [], protobuf: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    const server = await startServer();
    try {
      if (PIN) spawnSync('taskset', ['-a', '-p', '-c', '0', String(server.proc.pid)]);
      wrk(server.url, 'json', 1); // warm-up
      const order: Array<keyof typeof FILES> = round % 2 === 0 ? ['json', 'protobuf'] : ['protobuf', 'json'];
      for (const variant of order) results[variant].push(wrk(server.url, variant, SECONDS));
    } finally {
      await server.close();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const jsonRate = median(results.json.map(requestsPerSec));
console.table(
  (Object.keys(results) as Array<keyof typeof FILES>).map((variant) => ({
    task: `events/http/${variant}/batch=10`,
    'body bytes': Buffer.byteLength(variant === 'json' ? JSON.stringify({ events }) : EventBatch.encode(EventBatch.fromObject({ events })).finish()),
    'events/s': Math.round(median(results[variant].map(requestsPerSec)) * 10),
    'p99 ms': Number(median(results[variant].map((r) => r.latency_us.p99 / 1000)).toFixed(2)),
    'x json': Number((median(results[variant].map(requestsPerSec)) / jsonRate).toFixed(3)),
    'non-2xx': results[variant].reduce((a, r) => a + failures(r), 0),
  })),
);
console.log(`rounds ${ROUNDS} × ${SECONDS} s per variant, 64 connections, server ${PIN ? 'pinned to core 0, wrk on core 1' : 'unpinned'}`);
