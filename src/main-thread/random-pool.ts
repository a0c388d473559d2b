/**
 * @module main-thread/random-pool
 * Cryptographic random bytes for per-request identifiers (request_id, list_key), drawn from a
 * pool refilled 4 KiB at a time: a system call per identifier cost more than the rest of
 * building it; and UUIDs written straight into one string. Main thread only (one shared pool,
 * no locking).
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

const HEX = Buffer.from('0123456789abcdef');
/** Where the UUID's 16 bytes go in its 36 characters (hyphens after bytes 4, 6, 8 and 10). */
const UUID_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
const uuidText = Buffer.from('00000000-0000-0000-0000-000000000000');
const uuidBytes = new Uint8Array(16);

/** `bytes` as a UUID's text: one string, no intermediate ones (the uuid package built it from 20). */
function uuidString(bytes: Uint8Array): string {
  for (let i = 0; i < 16; i++) {
    const at = UUID_AT[i]!;
    uuidText[at] = HEX[bytes[i]! >> 4]!;
    uuidText[at + 1] = HEX[bytes[i]! & 15]!;
  }
  return uuidText.toString('latin1', 0, 36);
}

/**
 * A time-ordered UUID (RFC 9562 version 7): `unixMs` in the first 48 bits, then random bits.
 * Unlike the `uuid` package's v7 (imports use it) there is no counter: ids of one millisecond
 * are not ordered among themselves, which request ids do not need.
 */
export function uuidV7(unixMs: number): string {
  uuidBytes.set(random16());
  const high = Math.floor(unixMs / 2 ** 16);
  uuidBytes[0] = (high >>> 24) & 255;
  uuidBytes[1] = (high >>> 16) & 255;
  uuidBytes[2] = (high >>> 8) & 255;
  uuidBytes[3] = high & 255;
  uuidBytes[4] = (unixMs >>> 8) & 255;
  uuidBytes[5] = unixMs & 255;
  uuidBytes[6] = (uuidBytes[6]! & 0x0f) | 0x70;
  uuidBytes[8] = (uuidBytes[8]! & 0x3f) | 0x80;
  return uuidString(uuidBytes);
}
