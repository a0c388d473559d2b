// Run as a child process by test/unit/builder/report-snapshot.test.ts: writes two report state
// snapshots (builder/report-snapshot.ts) in turn, each several chunks long, forever, printing a
// line after each commit, until it is killed.
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { encodeReportSnapshot, putReportSnapshot } from '../../src/builder/report-snapshot.ts';
import { Store } from '../../src/store/open.ts';
import { transactionSyncRetried } from '../../src/store/commit.ts';
import { reportSnapshotOf } from './report-snapshot-state.ts';

const store = new Store({ ...DEFAULT_CONFIG.store, dataDir: process.argv[2]! });
const snapshots = [reportSnapshotOf(1000), reportSnapshotOf(2000)].map((s) => ({ position: s.position, encoded: encodeReportSnapshot(s) }));
for (let n = 0; ; n++) {
  const { position, encoded } = snapshots[n % 2]!;
  transactionSyncRetried(store.reportsRoot, () => putReportSnapshot(store, 'demo', position, encoded));
  console.log(`wrote ${position}`);
}
