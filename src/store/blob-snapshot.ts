/**
 * @module store/blob-snapshot
 * A snapshot of in-memory state as one binary blob: written cut into chunks beside a meta record
 * (format, the log position it covers, sizes, a SHA-256 of the blob), all inside one LMDB write
 * transaction, so a process killed while writing leaves the previous snapshot whole; read back
 * whole and checked, or refused with the reason (the caller logs it and replays the log instead).
 * Shared by the training-data snapshot (training/training-snapshot.ts) and the report counters'
 * state (builder/report-snapshot.ts); the byte writer and reader are the encodings' tools.
 */
import { createHash } from 'node:crypto';
import type { Database, Key } from 'lmdb';

export interface BlobSnapshotMeta {
  format: number;
  position: number;
  bytes: number;
  chunks: number;
  sha256: string;
}

/** Where a snapshot lives: the meta record, and its chunks in a binary-encoded database. */
export interface BlobSnapshotPlace {
  metaDb: Database;
  metaKey: Key;
  chunkDb: Database<Buffer>;
  chunkKey: (i: number) => Key;
}

const CHUNK_BYTES = 4 * 1024 * 1024;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * Puts `encoded` as the snapshot at `place` with `meta`'s own fields beside the blob's (call
 * inside a write transaction); chunks of a longer previous snapshot are removed.
 */
export function putBlobSnapshot<Meta extends BlobSnapshotMeta>(place: BlobSnapshotPlace, meta: Omit<Meta, 'bytes' | 'chunks' | 'sha256'>, encoded: Buffer): Meta {
  const chunks = Math.ceil(encoded.length / CHUNK_BYTES);
  const whole = { ...meta, bytes: encoded.length, chunks, sha256: sha256(encoded) } as Meta;
  const previous = place.metaDb.get(place.metaKey) as BlobSnapshotMeta | undefined;
  for (let i = 0; i < chunks; i++) place.chunkDb.put(place.chunkKey(i), encoded.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
  for (let i = chunks; i < (previous?.chunks ?? 0); i++) place.chunkDb.remove(place.chunkKey(i));
  place.metaDb.put(place.metaKey, whole);
  return whole;
}

/**
 * The snapshot at `place`: none (never written), its meta and bytes, or `problem` when one exists
 * but cannot be trusted (another format, a chunk missing, a checksum that fails).
 */
export function readBlobSnapshot<Meta extends BlobSnapshotMeta>(place: BlobSnapshotPlace, format: number, what: string): { meta?: Meta; bytes?: Buffer; problem?: string } {
  const meta = place.metaDb.get(place.metaKey) as Meta | undefined;
  if (!meta) return {};
  if (meta.format !== format) return { meta, problem: `${what} format ${meta.format} is not ${format}` };
  const parts: Buffer[] = [];
  for (let i = 0; i < meta.chunks; i++) {
    const chunk = place.chunkDb.getBinary(place.chunkKey(i));
    if (!chunk) return { meta, problem: `${what} chunk ${i} of ${meta.chunks} is missing` };
    // getBinary's bytes are its own copy: kept as read.
    parts.push(chunk);
  }
  const bytes = Buffer.concat(parts);
  if (bytes.length !== meta.bytes || sha256(bytes) !== meta.sha256) return { meta, problem: `${what} at position ${meta.position} fails its checksum` };
  return { meta, bytes };
}

/** Growable little-endian byte writer. */
export class ByteWriter {
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

  get written(): Buffer {
    return this.bytes.subarray(0, this.at);
  }
}

/** Reads ByteWriter's bytes; throws (naming `what`) on bytes that end early. */
export class ByteReader {
  readonly #bytes: Buffer;
  readonly #what: string;
  at = 0;

  constructor(bytes: Buffer, what: string) {
    this.#bytes = bytes;
    this.#what = what;
  }

  need(n: number): void {
    if (this.at + n > this.#bytes.length) throw new Error(`${this.#what} ends early at byte ${this.at}`);
  }

  u32(): number {
    this.need(4);
    this.at += 4;
    return this.#bytes.readUInt32LE(this.at - 4);
  }

  f64(): number {
    this.need(8);
    this.at += 8;
    return this.#bytes.readDoubleLE(this.at - 8);
  }

  string(): string {
    const n = this.u32();
    this.need(n);
    this.at += n;
    return this.#bytes.toString('utf8', this.at - n, this.at);
  }

  /** Throws unless every byte was read. */
  end(): void {
    if (this.at !== this.#bytes.length) throw new Error(`${this.#what} has ${this.#bytes.length - this.at} bytes after its end`);
  }
}
