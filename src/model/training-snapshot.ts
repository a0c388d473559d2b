/**
 * @module model/training-snapshot
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
import { createHash } from 'node:crypto';
import type { Store } from '../store/open.ts';
import { ConsumptionTable } from './consumption-table.ts';
import { transactionSyncRetried } from '../store/commit.ts';

/** What the log has said so far, as one pass of model/training-data.ts holds it. */
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

export interface TrainingSnapshotMeta {
  format: number;
  position: number;
  fingerprint: string;
  bytes: number;
  chunks: number;
  sha256: string;
}

/** 2: consumers and a flat consumption table (1 held a map of items per consumer). */
const FORMAT = 2;
const CHUNK_BYTES = 4 * 1024 * 1024;
const metaKey = (env: string) => [env, 'training', 'meta'];
const chunkKey = (env: string, i: number) => [env, 'training', 'chunk', i];

/** A fresh pass: nothing read yet. */
export const emptyPass = (): TrainingPass => ({ consumers: new Map(), consumed: new ConsumptionTable(), deviceUser: new Map(), newestSec: 0, position: 0 });

/** Growable little-endian byte writer. */
class Writer {
  bytes = Buffer.allocUnsafe(1 << 16);
  at = 0;

  #room(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.at + n, this.bytes.length * 2));
    this.bytes.copy(next, 0, 0, this.at);
    this.bytes = next;
  }

  u32(v: number): void {
    this.#room(4);
    this.at = this.bytes.writeUInt32LE(v, this.at);
  }

  f64(v: number): void {
    this.#room(8);
    this.at = this.bytes.writeDoubleLE(v, this.at);
  }

  string(s: string): void {
    const n = Buffer.byteLength(s);
    this.u32(n);
    this.#room(n);
    this.at += this.bytes.write(s, this.at);
  }
}

/** The pass as bytes: header, consumers in index order, the consumption table, links. */
export function encodePass(pass: TrainingPass): Buffer {
  const w = new Writer();
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
  return w.bytes.subarray(0, w.at);
}

/** Decodes encodePass's bytes; throws on bytes that do not hold a whole pass. */
export function decodePass(bytes: Buffer): TrainingPass {
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new Error(`training snapshot ends early at byte ${at}`);
  };
  const u32 = () => (need(4), (at += 4), bytes.readUInt32LE(at - 4));
  const f64 = () => (need(8), (at += 8), bytes.readDoubleLE(at - 8));
  const string = () => {
    const n = u32();
    need(n);
    at += n;
    return bytes.toString('utf8', at - n, at);
  };
  const position = f64();
  const newestSec = u32();
  const consumers = new Map<string, number>();
  for (let n = u32(), i = 0; i < n; i++) consumers.set(string(), i);
  const entries = u32();
  need(entries * 20);
  const consumed = new ConsumptionTable(entries);
  for (let e = 0; e < entries; e++) {
    const who = u32();
    if (who >= consumers.size) throw new Error(`training snapshot entry ${e} names consumer ${who} of ${consumers.size}`);
    consumed.note(who, u32(), f64(), u32());
  }
  const pass: TrainingPass = { consumers, consumed, deviceUser: new Map(), newestSec, position };
  for (let links = u32(); links > 0; links--) pass.deviceUser.set(string(), string());
  if (at !== bytes.length) throw new Error(`training snapshot has ${bytes.length - at} bytes after its end`);
  return pass;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Replaces the environment's snapshot with `encoded` (encodePass) in one transaction. */
export function writeTrainingSnapshot(store: Store, env: string, fingerprint: string, position: number, encoded: Buffer): TrainingSnapshotMeta {
  const chunks = Math.ceil(encoded.length / CHUNK_BYTES);
  const meta: TrainingSnapshotMeta = { format: FORMAT, position, fingerprint, bytes: encoded.length, chunks, sha256: sha256(encoded) };
  transactionSyncRetried(store.modelRoot, () => {
    const previous = store.modelState.get(metaKey(env)) as TrainingSnapshotMeta | undefined;
    for (let i = 0; i < chunks; i++) store.model.put(chunkKey(env, i), encoded.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
    for (let i = chunks; i < (previous?.chunks ?? 0); i++) store.model.remove(chunkKey(env, i));
    store.modelState.put(metaKey(env), meta);
  });
  return meta;
}

/**
 * The stored pass for these settings, or why there is none to use: `problem` is set when a
 * snapshot exists but cannot be trusted (the caller logs it and reads the whole log).
 */
export function readTrainingSnapshot(store: Store, env: string, fingerprint: string): { pass?: TrainingPass; problem?: string } {
  const meta = store.modelState.get(metaKey(env)) as TrainingSnapshotMeta | undefined;
  if (!meta) return {};
  if (meta.format !== FORMAT) return { problem: `training snapshot format ${meta.format} is not ${FORMAT}` };
  // Other event weights or item types: its weights mean something else. Not a fault.
  if (meta.fingerprint !== fingerprint) return {};
  const parts: Buffer[] = [];
  for (let i = 0; i < meta.chunks; i++) {
    // getBinary returns a copy of its own: concatenated as read.
    const chunk = store.model.getBinary(chunkKey(env, i));
    if (!chunk) return { problem: `training snapshot chunk ${i} of ${meta.chunks} is missing` };
    parts.push(chunk);
  }
  const bytes = Buffer.concat(parts);
  if (bytes.length !== meta.bytes || sha256(bytes) !== meta.sha256) return { problem: `training snapshot at position ${meta.position} fails its checksum` };
  try {
    const pass = decodePass(bytes);
    if (pass.position !== meta.position) return { problem: `training snapshot covers ${pass.position}, its meta says ${meta.position}` };
    return { pass };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}
