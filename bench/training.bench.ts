// `npm run bench -- training [--items 10000,100000]`: the trained model's build at catalog scale
// (issue 13: ≤ 60 s and ≤ 2 GB of anonymous memory at 100,000 items and 1,000,000 events). For
// each size, a child process under `nice -n 19` (as the trainer runs: low priority) generates the
// seeded synthetic data set (scripts/synthetic/dataset.ts; events 10× items, users half the
// items), builds its interaction rows as training/training-data.ts does (each user's strongest
// event per item, items of two users or more, most consumed first) and trains the served
// default model (training/sparse-autoencoder.ts). The parent samples the child's RssAnon every
// 50 ms. The child prints its phases; the bench prints one table.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { procStatusKb } from './wrk-runner.ts';

if (process.argv[2] === '--child') {
  const items = Number(process.argv[3]);
  const { DEFAULT_OPTIONS, generateEventBatches } = await import('../scripts/synthetic/dataset.ts');
  const { ENVIRONMENT_DEFAULTS } = await import('../src/config/defaults.ts');
  const { eventWeight } = await import('../src/domain/event-weight.ts');
  const { trainSparseAutoencoder } = await import('../src/training/sparse-autoencoder.ts');
  const t0 = performance.now();
  const options = { ...DEFAULT_OPTIONS, items, users: items / 2, events: items * 10 };
  const weights = ENVIRONMENT_DEFAULTS.model.eventWeights;
  const itemIx = new Map<string, number>();
  const byUser = new Map<string, Map<number, number>>();
  for (const batch of generateEventBatches(options, 1000)) {
    for (const e of batch) {
      const w = eventWeight(weights, e);
      if (!(w > 0) || typeof e.action_item !== 'string') continue;
      let ix = itemIx.get(e.action_item);
      if (ix === undefined) itemIx.set(e.action_item, (ix = itemIx.size));
      const who = String(e.user_id ?? e.device_id);
      let seen = byUser.get(who);
      if (!seen) byUser.set(who, (seen = new Map()));
      if (w > (seen.get(ix) ?? 0)) seen.set(ix, w);
    }
  }
  const users = new Uint32Array(itemIx.size);
  for (const seen of byUser.values()) for (const ix of seen.keys()) users[ix]!++;
  const ranked = [...users.keys()].filter((ix) => users[ix]! >= 2).sort((a, b) => users[b]! - users[a]! || a - b);
  const column = new Int32Array(itemIx.size).fill(-1);
  ranked.forEach((ix, c) => (column[ix] = c));
  const offsets = [0];
  const cols: number[] = [];
  const values: number[] = [];
  for (const seen of byUser.values()) {
    for (const [ix, w] of seen) if (column[ix]! >= 0) cols.push(column[ix]!), values.push(w);
    if (cols.length > offsets[offsets.length - 1]!) offsets.push(cols.length);
  }
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const rows = { offsets: Uint32Array.from(offsets), cols: Uint32Array.from(cols), values: Float32Array.from(values, (v) => v / mean) };
  const t1 = performance.now();
  const cpu0 = process.cpuUsage();
  const t = ENVIRONMENT_DEFAULTS.model.trained;
  const model = trainSparseAutoencoder(rows, ranked.length, { method: t.method, l2: t.l2, dropout: t.dropout, denseItems: t.maxItems, rowLength: t.rowLength, neighbourhood: t.neighbourhood });
  const cpu = process.cpuUsage(cpu0);
  const t2 = performance.now();
  let covered = 0;
  for (let c = 0; c < ranked.length; c++) if (model.offsets[c + 1]! > model.offsets[c]!) covered++;
  console.log(JSON.stringify({ items, columns: ranked.length, covered, interactions: cols.length, users: offsets.length - 1, prepareMs: t1 - t0, trainMs: t2 - t1, trainCpuMs: (cpu.user + cpu.system) / 1000, weights: model.cols.length }));
  process.exit(0);
}

const { values } = parseArgs({ options: { items: { type: 'string', default: process.env.BENCH_QUICK ? '10000' : '10000,100000' } }, strict: false });
const sizes = String(values.items).split(',').map(Number);
const rows: Record<string, Record<string, string | number>> = {};
for (const items of sizes) {
  const child = spawn('nice', ['-n', '19', process.execPath, '--import', 'tsx', import.meta.filename, '--child', String(items)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let peakAnon = 0;
  const sampler = setInterval(() => {
    // `nice` execs node, so the pid is node's; an exited child reads as 0.
    const kb = procStatusKb(child.pid!, 'RssAnon').RssAnon ?? 0;
    if (kb * 1024 > peakAnon) peakAnon = kb * 1024;
  }, 50);
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`training bench child for ${items} items exited ${code}`);
  const r = JSON.parse(out.trim().split('\n').pop()!) as Record<string, number>;
  rows[`${items.toLocaleString('en')} items`] = {
    'events': (items * 10).toLocaleString('en'),
    'model items (≥ 2 users)': r.columns!,
    'items with a row': r.covered!,
    'train s (wall)': (r.trainMs! / 1000).toFixed(1),
    'train s (CPU)': (r.trainCpuMs! / 1000).toFixed(1),
    'peak RssAnon MB': (peakAnon / 1024 ** 2).toFixed(0),
    'data prep s': (r.prepareMs! / 1000).toFixed(1),
  };
}
console.log('\ntrained model build (served defaults, nice 19; peak RssAnon includes generating the data)');
console.table(rows);
