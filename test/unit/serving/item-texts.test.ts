// An information field's values off the GC's heap (serving/item-texts.ts): every value reads
// back as last written, through overwrites in place, longer values appended, values cleared, an
// empty string kept apart from no value, and the compactions that reclaim stale bytes.
import { mulberry32 } from '../../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ItemTexts } from '../../../src/serving/item-texts.ts';

test('values read back as last written through overwrites, growth, clearing and compaction', () => {
  const texts = new ItemTexts();
  const count = 5_000;
  texts.grow(count);
  const expected: Array<string | undefined> = new Array(count).fill(undefined);
  // A deterministic mix of shorter, longer, non-ASCII, empty and cleared values, 60 passes: the
  // arena passes 1 MB of stale bytes many times over, so compactions run between writes.
  const next = mulberry32(7);
  for (let pass = 0; pass < 60; pass++) {
    for (let k = 0; k < count; k++) {
      const ix = Math.floor(next() * count);
      const r = next();
      const value = r < 0.1 ? undefined : r < 0.15 ? '' : r < 0.3 ? `Grüße ${pass}/${ix} ✓` : 'x'.repeat(Math.floor(next() * 40)) + `${ix}`;
      texts.set(ix, value);
      expected[ix] = value;
    }
    for (let ix = 0; ix < count; ix += 97) assert.equal(texts.get(ix), expected[ix]);
  }
  for (let ix = 0; ix < count; ix++) assert.equal(texts.get(ix), expected[ix], `ix ${ix}`);
});

test('an ix past the capacity is grown on write, and reads as no value before', () => {
  const texts = new ItemTexts();
  assert.equal(texts.get(10), undefined);
  texts.set(10, 'ten');
  assert.equal(texts.get(10), 'ten');
  assert.equal(texts.get(9), undefined);
  texts.set(10, '');
  assert.equal(texts.get(10), '');
  texts.set(10, undefined);
  assert.equal(texts.get(10), undefined);
});
