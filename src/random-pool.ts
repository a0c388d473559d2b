/**
 * @module random-pool
 * Cryptographic random bytes for per-request identifiers (request_id, list_key), drawn from a
 * pool refilled 4 KiB at a time: a system call per identifier cost more than the rest of
 * building it. Main thread only (one shared pool, no locking).
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let used = POOL_BYTES;

/** 16 fresh random bytes; a view valid until the next call (copy it to keep it). */
export function random16(): Uint8Array {
  if (used + 16 > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const bytes = pool.subarray(used, used + 16);
  used += 16;
  return bytes;
}
