// The Piscina hop of a recommendation request (issue: "measure the Piscina hop and minimise it:
// batching several requests per task, transferring typed arrays instead of cloning"). A worker
// that answers at once (bench/fixtures/hop-worker.mjs) is driven the way src/main-thread/ranking-pool.ts
// drives the ranking workers: one batch in flight per worker, the requests that arrive meanwhile
// forming the next batch. Reported: µs of main-thread + worker time per request, by batch size,
// with results cloned (what the service does) or moved as one JSON Uint8Array. Medians of
// BENCH_ROUNDS rounds (default 5). Run: npm run bench -- pool-hop
import { Piscina } from 'piscina';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 5));
const REQUESTS = QUICK ? 20_000 : 100_000;
const BATCH_SIZES = [1, 4, 16, 64];
const MODES = ['clone', 'transfer'] as const;
const decoder = new TextDecoder();

const task = { environment: 'demo', nowSec: 0, deviceId: 'd1', userId: 'u1', history: [], recent: [], exclude: [], lists: [{ strategy: 'personalized', size: 10 }, { strategy: 'item_to_item', size: 10 }] };

async function run(pool: Piscina, batchSize: number, mode: (typeof MODES)[number]): Promise<number> {
  const batches = Math.ceil(REQUESTS / batchSize);
  const tasks = Array.from({ length: batchSize }, () => task);
  const start = process.hrtime.bigint();
  for (let b = 0; b < batches; b++) {
    const result = await pool.run({ tasks, mode });
    if (mode === 'transfer') JSON.parse(decoder.decode(result as Uint8Array));
  }
  return Number(process.hrtime.bigint() - start) / 1000 / (batches * batchSize);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const pool = new Piscina({ filename: new URL('./fixtures/hop-worker.mjs', import.meta.url).href, minThreads: 1, maxThreads: 1, idleTimeout: Infinity });
await run(pool, 16, 'clone'); // warm-up
const rows: Array<{ batch: number; mode: string; usPerRequest: number }> = [];
for (const batch of BATCH_SIZES) {
  for (const mode of MODES) {
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await run(pool, batch, mode));
    rows.push({ batch, mode, usPerRequest: median(rounds) });
  }
}
await pool.destroy();

console.log(`Piscina hop per request (${REQUESTS.toLocaleString()} requests, median of ${ROUNDS} rounds; one batch in flight, as src/main-thread/ranking-pool.ts)`);
console.log('| batch | results cloned µs/request | moved as JSON bytes µs/request | hops/s at batch 1 |');
console.log('|---|---|---|---|');
for (const batch of BATCH_SIZES) {
  const clone = rows.find((r) => r.batch === batch && r.mode === 'clone')!.usPerRequest;
  const moved = rows.find((r) => r.batch === batch && r.mode === 'transfer')!.usPerRequest;
  console.log(`| ${batch} | ${clone.toFixed(2)} | ${moved.toFixed(2)} | ${batch === 1 ? Math.round(1e6 / clone).toLocaleString() : ''} |`);
}
if (process.env.BENCH_JSON === '1') for (const row of rows) console.log(JSON.stringify({ bench: 'pool-hop', ...row }));
