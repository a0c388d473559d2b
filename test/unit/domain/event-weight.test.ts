// domain/event-weight.ts: an event's consumption weight is its type's weight times its own
// `weight` (a trusted import's rating) raised to the trained model's ownWeightPower.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TrackedEvent } from '../../../src/domain/event.ts';
import { eventWeight } from '../../../src/domain/event-weight.ts';

const WEIGHTS = { item_interaction: 2, purchase: 5 };
const rating = (weight?: number): TrackedEvent => ({
  event_type: 'item_interaction',
  user_id: 'u',
  device_id: 'd',
  channel: 'test',
  page_type: 'detail',
  action_item: 'i',
  action_item_type: 'item',
  interaction_type: 'rating',
  ...(weight === undefined ? {} : { weight }),
});

test('an event without its own weight counts its type weight, whatever the power', () => {
  for (const power of [0, 0.5, 1]) assert.equal(eventWeight(WEIGHTS, rating(), power), 2);
});

test('an own weight of 4 counts its type weight times 4 at power 1 (the default), 2 at 0.5, 1 at 0', () => {
  assert.equal(eventWeight(WEIGHTS, rating(4)), 8);
  assert.equal(eventWeight(WEIGHTS, rating(4), 1), 8);
  assert.equal(eventWeight(WEIGHTS, rating(4), 0.5), 4);
  assert.equal(eventWeight(WEIGHTS, rating(4), 0), 2);
});

test('an own weight of 0 counts 0 at every power, 0 included', () => {
  for (const power of [0, 0.5, 1]) assert.equal(eventWeight(WEIGHTS, rating(0), power), 0);
});

test('a type without a configured weight counts 0; a negative or non-finite own weight is ignored', () => {
  assert.equal(eventWeight({ purchase: 5 }, rating(4), 0.5), 0);
  assert.equal(eventWeight(WEIGHTS, rating(-1), 0.5), 2);
  assert.equal(eventWeight(WEIGHTS, rating(Number.NaN), 0.5), 2);
});
