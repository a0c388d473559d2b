/**
 * @module random-pool
 * Cryptographic random bytes for per-request identifiers (request_id, list_key), drawn from a
 * pool refilled 4 KiB at a time: a system call per identifier cost more than the rest of
 * building it. Main thread only (one shared pool, no locking).
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
/** A Buffer, so that a key is encoded straight from the pool (no Buffer per key). */
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/** Offset in `pool` of 16 fresh random bytes. */
function take16(): number {
  if (used + 16 > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  used += 16;
  return used - 16;
}

/** 16 fresh random bytes; a view valid until the next call (copy it to keep it). */
export function random16(): Uint8Array {
  const at = take16();
  return pool.subarray(at, at + 16);
}

/** 128 fresh random bits as 22 base64url characters (an unguessable key). */
export function randomKey(): string {
  const at = take16();
  return pool.toString('base64url', at, at + 16);
}
