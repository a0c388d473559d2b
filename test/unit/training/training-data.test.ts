// training/training-data.ts fingerprintOf: a training snapshot keeps values computed under the
// settings in its fingerprint, so each setting the values depend on must change it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENVIRONMENT_DEFAULTS } from '../../../src/config/defaults.ts';
import { fingerprintOf } from '../../../src/training/training-data.ts';

const withTrained = (trained: Partial<typeof ENVIRONMENT_DEFAULTS.model.trained>) => ({
  ...ENVIRONMENT_DEFAULTS,
  model: { ...ENVIRONMENT_DEFAULTS.model, trained: { ...ENVIRONMENT_DEFAULTS.model.trained, ...trained } },
});

test('another ownWeightPower gives another fingerprint: a snapshot made under the old one is not used', () => {
  assert.notEqual(fingerprintOf(withTrained({ ownWeightPower: 1 })), fingerprintOf(withTrained({ ownWeightPower: 0.5 })));
});

test('settings the values do not depend on (the model weight, λ) keep the fingerprint', () => {
  assert.equal(fingerprintOf(withTrained({ weight: 10, l2: 50 })), fingerprintOf(ENVIRONMENT_DEFAULTS));
});
