// Long fuzzing run (the suite runs 3,000 cases in test/integration/fuzz.test.ts):
//
//   npm run bench -- fuzz                    50,000 cases, random seed
//   npm run bench -- fuzz --cases 200000 --seed 7
//
// Same property and generators (test/helpers/fuzz.ts): every route, mutated bodies, headers,
// paths and queries; fails on the first 5xx, hang, socket error or stack trace, printing the
// shrunk counterexample and the seed to replay it. Prints counts every 1,000 cases and a final
// line with cases, 4xx, 5xx and the count per status.
import { parseArgs } from 'node:util';
import { getToken } from '../test/helpers/auth.ts';
import { fuzzRoutes } from '../test/helpers/fuzz.ts';
import { startServer } from '../test/helpers/server.ts';

const { values } = parseArgs({ options: { cases: { type: 'string', default: '50000' }, seed: { type: 'string' } }, allowPositionals: true });
const cases = Number(values.cases);
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
console.error(`fuzz: ${cases} cases, seed ${seed}`);
const server = await startServer({ config: { ingest: { feeds: { timeoutMs: 2000, retries: 0 } } } });
let code = 0;
try {
  const token = await getToken(server);
  const started = Date.now();
  const counts = await fuzzRoutes({ url: server.url, token, environment: 'demo' }, cases, seed, (c) =>
    console.error(`  ${c.cases} cases, 4xx ${c.status4xx}, 5xx ${c.status5xx} (${Math.round(c.cases / ((Date.now() - started) / 1000))}/s)`),
  );
  const alive = server.proc.exitCode === null && (await fetch(`${server.url}/health`)).status === 200;
  console.log(`cases ${counts.cases}, 4xx ${counts.status4xx}, 5xx ${counts.status5xx}, server alive ${alive}, by status ${JSON.stringify(counts.byStatus)}, seed ${seed}`);
  if (!alive) code = 1;
} catch (err) {
  console.error(`fuzz failed (seed ${seed}):`, err);
  code = 1;
} finally {
  await server.close();
}
process.exit(code);
