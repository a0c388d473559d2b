// The token endpoint's limits as rules over a clock: buckets refill at their rate, a lockout
// follows repeated failures, doubles while failures continue, is capped, and a success ends it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AttemptLimiter } from '../../../src/auth/attempt-limiter.ts';
import type { TokenEndpointLimits } from '../../../src/config/types.ts';

const LIMITS: TokenEndpointLimits = { addressBurst: 3, addressPerMinute: 60, clientBurst: 2, clientPerMinute: 6, lockoutFailures: 3, lockoutSec: 60 };

function clocked() {
  let now = 1_000_000;
  const limiter = new AttemptLimiter(LIMITS, () => now);
  return { limiter, advance: (ms: number) => (now += ms) };
}

test('an address gets its burst, then one request per second at 60 a minute, with Retry-After', () => {
  const { limiter, advance } = clocked();
  for (let i = 0; i < 3; i++) assert.equal(limiter.admitAddress('a'), undefined);
  assert.deepEqual(limiter.admitAddress('a'), { reason: 'rate_limited', retryAfterSec: 1 });
  assert.equal(limiter.admitAddress('b'), undefined, 'another address has its own bucket');
  advance(1000);
  assert.equal(limiter.admitAddress('a'), undefined);
  assert.equal(limiter.admitAddress('a')?.reason, 'rate_limited');
  assert.equal(limiter.stats.rateLimited, 2);
});

test('a client id gets its burst, then 6 a minute', () => {
  const { limiter, advance } = clocked();
  assert.equal(limiter.admitClient('c'), undefined);
  assert.equal(limiter.admitClient('c'), undefined);
  assert.deepEqual(limiter.admitClient('c'), { reason: 'rate_limited', retryAfterSec: 10 });
  advance(10_000);
  assert.equal(limiter.admitClient('c'), undefined);
});

test('failures lock a client id, lockouts in a row double up to 16x, and a success clears them', () => {
  const { limiter, advance } = clocked();
  const fail = (n: number) => {
    for (let i = 0; i < n; i++) limiter.recordFailure('c');
  };
  fail(3);
  assert.deepEqual(limiter.admitClient('c'), { reason: 'locked_out', retryAfterSec: 60 });
  // Each lockout in a row lasts twice the last, up to 16 lockoutSec: never for ever.
  for (const expected of [120, 240, 480, 960, 960]) {
    advance(3_600_000);
    fail(3);
    assert.deepEqual(limiter.admitClient('c'), { reason: 'locked_out', retryAfterSec: expected });
  }
  advance(960_000);
  assert.equal(limiter.admitClient('c'), undefined, 'the right secret can be tried once the lockout ends');
  limiter.recordSuccess('c');
  fail(3);
  assert.deepEqual(limiter.admitClient('c'), { reason: 'locked_out', retryAfterSec: 60 }, 'a success reset the doubling');
  assert.equal(limiter.stats.failedAttempts, 21);
  assert.equal(limiter.stats.lockouts, 7);
});

test('failures below the threshold lock nothing, and other ids are not affected', () => {
  const { limiter } = clocked();
  limiter.recordFailure('c');
  limiter.recordFailure('c');
  assert.equal(limiter.admitClient('c'), undefined);
  for (let i = 0; i < 3; i++) limiter.recordFailure('x');
  assert.equal(limiter.admitClient('y'), undefined);
});
