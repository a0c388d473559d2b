/**
 * @module auth/attempt-limiter
 * Limits on the token endpoint: a token bucket per source address and one per client id, and a
 * temporary lockout of a client id after repeated failed secrets. In memory, per process (a
 * restart forgets them, which only ever helps the right secret). Counts failed attempts for
 * operators. Does no I/O and knows nothing of HTTP.
 */
import type { TokenEndpointLimits } from '../config/types.ts';


/** Why an attempt may not proceed, and when it may be retried. */
export interface Refusal {
  reason: 'rate_limited' | 'locked_out';
  retryAfterSec: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

interface Failures {
  count: number;
  /** Lockouts in a row (the next one lasts lockoutSec · 2^(lockouts)). */
  lockouts: number;
  lockedUntil: number;
}

/**
 * Keys (addresses, client ids) remembered at most, per map and generation: when the newer
 * generation is full the older is dropped whole, so an attacker rotating addresses or ids costs
 * bounded memory (about 100 bytes a key) and forgets only the quietest keys.
 */
const MAX_KEYS = 50_000;
/** A lockout lasts at most this many lockoutSec (16 min with the default 60 s). */
const MAX_LOCKOUT_FACTOR = 16;

class Generations<V> {
  #newer = new Map<string, V>();
  #older = new Map<string, V>();

  get(key: string): V | undefined {
    const value = this.#newer.get(key);
    if (value !== undefined) return value;
    const old = this.#older.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: string, value: V): void {
    if (!this.#newer.has(key) && this.#newer.size >= MAX_KEYS) {
      this.#older = this.#newer;
      this.#newer = new Map();
    }
    this.#newer.set(key, value);
  }

  delete(key: string): void {
    this.#newer.delete(key);
    this.#older.delete(key);
  }

  get size(): number {
    return this.#newer.size + this.#older.size;
  }
}

/** Counters for /health (and the metrics the operability work adds). */
export interface AttemptStats {
  failedAttempts: number;
  rateLimited: number;
  lockedOut: number;
  lockouts: number;
}

export class AttemptLimiter {
  readonly #limits: TokenEndpointLimits;
  readonly #now: () => number;
  readonly #addresses = new Generations<Bucket>();
  readonly #clients = new Generations<Bucket>();
  readonly #failures = new Generations<Failures>();
  readonly stats: AttemptStats = { failedAttempts: 0, rateLimited: 0, lockedOut: 0, lockouts: 0 };

  /** `now` in ms; tests of the rules pass a clock, the service uses Date.now. */
  constructor(limits: TokenEndpointLimits, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Takes one request from the address's bucket; a Refusal when it is empty. */
  admitAddress(address: string): Refusal | undefined {
    return this.#take(this.#addresses, address, this.#limits.addressBurst, this.#limits.addressPerMinute);
  }

  /** Checks the client id's lockout, then takes one request from its bucket. */
  admitClient(clientId: string): Refusal | undefined {
    const failures = this.#failures.get(clientId);
    const now = this.#now();
    if (failures && failures.lockedUntil > now) {
      this.stats.lockedOut++;
      return { reason: 'locked_out', retryAfterSec: Math.ceil((failures.lockedUntil - now) / 1000) };
    }
    return this.#take(this.#clients, clientId, this.#limits.clientBurst, this.#limits.clientPerMinute);
  }

  /** A wrong secret (or unknown client): counted, and past the threshold the id is locked. */
  recordFailure(clientId: string): void {
    this.stats.failedAttempts++;
    const now = this.#now();
    const failures = this.#failures.get(clientId) ?? { count: 0, lockouts: 0, lockedUntil: 0 };
    failures.count++;
    if (failures.count >= this.#limits.lockoutFailures) {
      // Doubling per lockout in a row slows a patient guesser further; capped so the holder of the
      // right secret waits at most MAX_LOCKOUT_FACTOR lockouts, and a success forgets it all.
      const lockMs = this.#limits.lockoutSec * 1000 * Math.min(2 ** failures.lockouts, MAX_LOCKOUT_FACTOR);
      failures.lockedUntil = now + lockMs;
      failures.lockouts++;
      failures.count = 0;
      this.stats.lockouts++;
    }
    this.#failures.set(clientId, failures);
  }

  /** The right secret: the id's failures and lockout history are forgotten. */
  recordSuccess(clientId: string): void {
    this.#failures.delete(clientId);
  }

  #take(buckets: Generations<Bucket>, key: string, burst: number, perMinute: number): Refusal | undefined {
    const now = this.#now();
    const ratePerMs = perMinute / 60_000;
    const bucket = buckets.get(key) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) * ratePerMs);
    bucket.at = now;
    buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    this.stats.rateLimited++;
    return { reason: 'rate_limited', retryAfterSec: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerMs / 1000)) };
  }
}
