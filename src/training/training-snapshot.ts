/**
 * @module training/training-snapshot
 * What a trained-model build has read of the event log, kept for the next build (issue 12: "a
 * build never reads the whole event log when a snapshot covers most of it"): per user and
 * device the items consumed with their strongest weight and latest time, the device-to-user
 * links, and the log position they cover. The next build starts from it and reads only the log
 * after that position.
 *
 * Stored as one binary blob cut into chunks, with a meta record (position, sizes, a SHA-256 of
 * the blob, and a fingerprint of the settings the weights depend on), all in one LMDB
 * transaction: a process killed while writing leaves the previous snapshot whole. A snapshot
 * whose checksum or layout does not hold, or made under other settings, is not used: the
 * caller reads the whole log (and says why).
 *
 * | key (db)                                 | value                                   |
 * |------------------------------------------|-----------------------------------------|
 * | [env, 'training', 'meta'] (modelState)   | TrainingSnapshotMeta (msgpack)           |
 * | [env, 'training', 'chunk', i] (model)    | bytes of the blob, CHUNK_BYTES at most   |
 */
import type { Store } from '../store/open.ts';
import { ConsumptionTable } from './consumption-table.ts';
import { transactionSyncRetried } from '../store/commit.ts';
import { ByteReader, ByteWriter, putBlobSnapshot, readBlobSnapshot, type BlobSnapshotMeta, type BlobSnapshotPlace } from '../store/blob-snapshot.ts';

/** What the log has said so far, as one pass of training/training-data.ts holds it. */
export interface TrainingPass {
  /** Consumers, a user (`u\0id`) or a device (`d\0id`), → their index in `consumed`, by first appearance. */
  consumers: Map<string, number>;
  /** Per consumer and item: the strongest weight and the latest unix sec at it. */
  consumed: ConsumptionTable;
  /** Device → the user it was first seen with. */
  deviceUser: Map<string, string>;
  /** Newest event time read (unix sec). */
  newestSec: number;
  /** Last event sequence number the pass covers. */
  position: number;
}

export interface TrainingSnapshotMeta extends BlobSnapshotMeta {
  fingerprint: string;
}

/** 2: consumers and a flat consumption table (1 held a map of items per consumer). */
const FORMAT = 2;
const metaKey = (env: string) => [env, 'training', 'meta'];
const chunkKey = (env: string, i: number) => [env, 'training', 'chunk', i];

/** A fresh pass: nothing read yet. */
export const emptyPass = (): TrainingPass => ({ consumers: new Map(), consumed: new ConsumptionTable(), deviceUser: new Map(), newestSec: 0, position: 0 });

/** The pass as bytes: header, consumers in index order, the consumption table, links. */
export function encodePass(pass: TrainingPass): Buffer {
  const w = new ByteWriter();
  w.f64(pass.position);
  w.u32(pass.newestSec);
  w.u32(pass.consumers.size);
  for (const who of pass.consumers.keys()) w.string(who);
  const t = pass.consumed;
  w.u32(t.length);
  for (let e = 0; e < t.length; e++) {
    w.u32(t.who[e]!);
    w.u32(t.ix[e]!);
    w.f64(t.weight[e]!);
    w.u32(t.sec[e]!);
  }
  w.u32(pass.deviceUser.size);
  for (const [device, user] of pass.deviceUser) {
    w.string(device);
    w.string(user);
  }
  return w.written;
}

/** Decodes encodePass's bytes; throws on bytes that do not hold a whole pass. */
export function decodePass(bytes: Buffer): TrainingPass {
  const r = new ByteReader(bytes, 'training snapshot');
  const position = r.f64();
  const newestSec = r.u32();
  const consumers = new Map<string, number>();
  for (let n = r.u32(), i = 0; i < n; i++) consumers.set(r.string(), i);
  const entries = r.u32();
  r.need(entries * 20);
  const consumed = new ConsumptionTable(entries);
  for (let e = 0; e < entries; e++) {
    const who = r.u32();
    if (who >= consumers.size) throw new Error(`training snapshot entry ${e} names consumer ${who} of ${consumers.size}`);
    consumed.note(who, r.u32(), r.f64(), r.u32());
  }
  const pass: TrainingPass = { consumers, consumed, deviceUser: new Map(), newestSec, position };
  for (let links = r.u32(); links > 0; links--) pass.deviceUser.set(r.string(), r.string());
  r.end();
  return pass;
}

const place = (store: Store, env: string): BlobSnapshotPlace => ({ metaDb: store.modelState, metaKey: metaKey(env), chunkDb: store.model, chunkKey: (i) => chunkKey(env, i) });

/** Replaces the environment's snapshot with `encoded` (encodePass) in one transaction. */
export function writeTrainingSnapshot(store: Store, env: string, fingerprint: string, position: number, encoded: Buffer): TrainingSnapshotMeta {
  return transactionSyncRetried(store.modelRoot, () => putBlobSnapshot<TrainingSnapshotMeta>(place(store, env), { format: FORMAT, position, fingerprint }, encoded));
}

/**
 * The stored pass for these settings, or why there is none to use: `problem` is set when a
 * snapshot exists but cannot be trusted (the caller logs it and reads the whole log).
 */
export function readTrainingSnapshot(store: Store, env: string, fingerprint: string): { pass?: TrainingPass; problem?: string } {
  const meta = store.modelState.get(metaKey(env)) as TrainingSnapshotMeta | undefined;
  // Other event weights or item types: its weights mean something else. Not a fault.
  if (meta && meta.format === FORMAT && meta.fingerprint !== fingerprint) return {};
  const { bytes, problem } = readBlobSnapshot<TrainingSnapshotMeta>(place(store, env), FORMAT, 'training snapshot');
  if (!bytes) return problem ? { problem } : {};
  try {
    const pass = decodePass(bytes);
    if (pass.position !== meta!.position) return { problem: `training snapshot covers ${pass.position}, its meta says ${meta!.position}` };
    return { pass };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}
