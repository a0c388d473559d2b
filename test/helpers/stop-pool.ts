// Starts a ranking pool (main-thread/ranking-pool.ts, real workers) on a data directory and stops it at
// once, `rounds` times, and prints per round (a JSON array on stdout) whether the engines were
// built when close() returned and how many workers were left. A process of its own, as
// build-model.ts for the same reason: worker threads inherit the test process's TypeScript
// preload but cannot load it. Usage:
//   node --import tsx test/helpers/stop-pool.ts <dataDir> <rounds>
import { loadConfig } from '../../src/config/load.ts';
import { RankingPool } from '../../src/main-thread/ranking-pool.ts';
import { Store } from '../../src/store/open.ts';

const [dataDir = '', roundsArg = '1'] = process.argv.slice(2);
const config = loadConfig({ AFFINITY_DATA_DIR: dataDir, AFFINITY_RANK_WORKERS: '2' });
// The service opens the store before its workers do (it creates the environments).
const store = new Store(config.store);
const rounds: Array<{ startingAtClose: boolean; builtAtClose: boolean; threadsLeft: number; failures: string[] }> = [];
for (let r = 0; r < Number(roundsArg); r++) {
  const failures: string[] = [];
  const pool = new RankingPool(config, (err) => failures.push(String(err)));
  const startingAtClose = !pool.engineBuilt;
  let built = false;
  const ready = pool.ready().then(
    () => (built = true),
    (err: unknown) => failures.push(String(err)),
  );
  await pool.close();
  const builtAtClose = built;
  await ready;
  rounds.push({ startingAtClose, builtAtClose, threadsLeft: pool.threads, failures });
}
await store.close();
console.log(JSON.stringify(rounds));
