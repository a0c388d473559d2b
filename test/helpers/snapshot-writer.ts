// Run as a child process by test/unit/training/training-snapshot.test.ts: writes two training
// snapshots (training/training-snapshot.ts) in turn, each several chunks long, forever, printing a
// line after each commit, until it is killed.
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { writeTrainingSnapshot } from '../../src/training/training-snapshot.ts';
import { Store } from '../../src/store/open.ts';
import { snapshotPass } from './snapshot-pass.ts';
import { encodePass } from '../../src/training/training-snapshot.ts';

const store = new Store({ ...DEFAULT_CONFIG.store, dataDir: process.argv[2]! });
const passes = [snapshotPass(1000), snapshotPass(2000)].map((pass) => ({ position: pass.position, encoded: encodePass(pass) }));
for (let n = 0; ; n++) {
  const { position, encoded } = passes[n % 2]!;
  writeTrainingSnapshot(store, 'demo', 'fingerprint', position, encoded);
  console.log(`wrote ${position}`);
}
