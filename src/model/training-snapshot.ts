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

/** What the log has said so far, as one pass of model/training-data.ts holds it. */
export interface TrainingPass {
  /** Per user (`u\0id`) or device (`d\0id`): item ix → [strongest weight, latest unix sec at it]. */
  byUser: Map<string, Map<number, [weight: number, unixSec: number]>>;
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

const FORMAT = 1;
const CHUNK_BYTES = 4 * 1024 * 1024;
const metaKey = (env: string) => [env, 'training', 'meta'];
const chunkKey = (env: string, i: number) => [env, 'training', 'chunk', i];

/** A fresh pass: nothing read yet. */
export const emptyPass = (): TrainingPass => ({ byUser: new Map(), deviceUser: new Map(), newestSec: 0, position: 0 });

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

/** The pass as bytes: header, users with their items, links. */
export function encodePass(pass: TrainingPass): Buffer {
  const w = new Writer();
  w.f64(pass.position);
  w.u32(pass.newestSec);
  w.u32(pass.byUser.size);
  for (const [who, items] of pass.byUser) {
    w.string(who);
    w.u32(items.size);
    for (const [ix, [weight, unixSec]] of items) {
      w.u32(ix);
      w.f64(weight);
      w.u32(unixSec);
    }
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
  const pass = emptyPass();
  pass.position = f64();
  pass.newestSec = u32();
  for (let users = u32(); users > 0; users--) {
    const who = string();
    const items = new Map<number, [number, number]>();
    for (let n = u32(); n > 0; n--) {
      const ix = u32();
      items.set(ix, [f64(), u32()]);
    }
    pass.byUser.set(who, items);
  }
  for (let links = u32(); links > 0; links--) pass.deviceUser.set(string(), string());
  if (at !== bytes.length) throw new Error(`training snapshot has ${bytes.length - at} bytes after its end`);
  return pass;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Replaces the environment's snapshot with `encoded` (encodePass) in one transaction. */
export function writeTrainingSnapshot(store: Store, env: string, fingerprint: string, position: number, encoded: Buffer): TrainingSnapshotMeta {
  const chunks = Math.ceil(encoded.length / CHUNK_BYTES);
  const meta: TrainingSnapshotMeta = { format: FORMAT, position, fingerprint, bytes: encoded.length, chunks, sha256: sha256(encoded) };
  store.modelRoot.transactionSync(() => {
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
