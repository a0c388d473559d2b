/**
 * @module training/train-model
 * One build of an environment's trained model, start to finish: read the event log
 * (training/training-data.ts: its snapshot and the log after it, and keep a new snapshot), learn
 * the item weights (training/linear-autoencoder.ts), write them as a new version and switch to it
 * atomically (store/trained-model.ts). A build that fails at any
 * step removes what it wrote and leaves `current`, and so the serving model, unchanged. Runs
 * synchronously and long: only the trainer worker (and the offline eval) call it.
 */
import type { EnvironmentConfig } from '../config/types.ts';
import type { Store } from '../store/open.ts';
import {
  type TrainedModelMeta,
  readTrainedMeta,
  removeTrainedVersions,
  switchTrainedVersion,
  writeTrainedVersion,
} from '../store/trained-model.ts';
import { sparseModelBytes, trainSparseAutoencoder } from './sparse-autoencoder.ts';
import { readTrainingData } from './training-data.ts';
import { writeTrainingSnapshot } from './training-snapshot.ts';
import { writingAtNormalClass } from '../threads/thread-class.mjs';

/** How a build read the event log: from which position, how many events, and why not from its snapshot. */
export interface LogRead {
  readFrom: number;
  eventsRead: number;
  snapshotProblem?: string;
}

export type BuildOutcome =
  | { status: 'built'; meta: TrainedModelMeta; readMs: number; trainMs: number; writeMs: number; log: LogRead }
  /** `log` is absent when nothing was read (the trained model is disabled). */
  | { status: 'skipped'; reason: string; log?: LogRead };

/** Builds and switches to a new model; throws (having cleaned up) when the build fails. */
export function buildTrainedModel(store: Store, environment: string, config: EnvironmentConfig): BuildOutcome {
  const settings = config.model.trained;
  const started = performance.now();
  const serving = readTrainedMeta(store, environment);
  // A partial version left by a build that died mid-write (a killed process) goes first.
  writingAtNormalClass(() => removeTrainedVersions(store, environment, serving?.version));
  const data = readTrainingData(store, environment, config);
  const log: LogRead = { readFrom: data.readFrom, eventsRead: data.eventsRead, ...(data.snapshotProblem ? { snapshotProblem: data.snapshotProblem } : {}) };
  // What was read is kept for the next build whatever this one does with it.
  const snapshot = data.snapshot;
  if (snapshot) writingAtNormalClass(() => writeTrainingSnapshot(store, environment, snapshot.fingerprint, snapshot.position, snapshot.encoded));
  const n = data.items.length;
  if (n === 0) return { status: 'skipped', reason: 'no consumption events to learn from', log };
  const options = {
    method: settings.method,
    l2: settings.l2,
    dropout: settings.dropout,
    denseItems: settings.maxItems,
    rowLength: settings.rowLength,
    neighbourhood: settings.neighbourhood,
  };
  const memoryBytes = sparseModelBytes(n, data.rows.cols.length, options) + data.rows.cols.length * 8;
  if (memoryBytes > settings.maxMemoryBytes) {
    throw new Error(
      `a model of ${n} items needs ${memoryBytes} bytes, over model.trained.maxMemoryBytes (${settings.maxMemoryBytes}); lower model.trained.maxItems or neighbourhood`,
    );
  }
  const read = performance.now();
  // Training takes seconds to minutes without a turn of the event loop: no snapshot may stay open.
  store.releaseReadSnapshots();
  const weights = trainSparseAutoencoder(data.rows, n, options);
  const trained = performance.now();
  const version = (serving?.version ?? 0) + 1;
  // The writes hold the model environment's write lock, which the model builder waits for.
  return writingAtNormalClass(() => {
    try {
      writeTrainedVersion(store, environment, version, data.items, weights);
      const meta: TrainedModelMeta = {
        version,
        items: n,
        method: settings.method,
        users: data.users,
        interactions: data.rows.cols.length,
        eventsPosition: data.eventsPosition,
        builtAt: Date.now(),
        buildMs: Math.round(performance.now() - started),
        memoryBytes,
      };
      switchTrainedVersion(store, environment, meta);
      const written = performance.now();
      removeTrainedVersions(store, environment, version);
      return { status: 'built', meta, readMs: read - started, trainMs: trained - read, writeMs: written - trained, log };
    } catch (err) {
      removeTrainedVersions(store, environment, readTrainedMeta(store, environment)?.version);
      throw err;
    }
  });
}
