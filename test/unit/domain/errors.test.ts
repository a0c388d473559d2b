// STYLE §5: every error kind is documented in the error table of docs/reference.md, so integrators can look
// up any `type` the service returns.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { E } from '../../../src/domain/errors.ts';

const README = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'reference.md'), 'utf8');

test('every error kind is in the error table of docs/reference.md with its default status', () => {
  const samples: Record<string, unknown[]> = { methodNotAllowed: ['GET', '/x', 'PUT'], invalidEvents: ['x', []], invalidItem: ['x', []] };
  for (const [kind, make] of Object.entries(E)) {
    const kebab = kind.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const args = samples[kind] ?? ['x', 'y', 'z'];
    const error = (make as (...a: unknown[]) => { status: number; kind: string })(...args);
    assert.equal(error.kind, kind);
    const row = README.split('\n').find((line) => line.startsWith(`| \`${kebab}\` |`));
    assert.ok(row, `docs/reference.md error table lacks ${kebab}`);
    assert.match(row, new RegExp(`\\| ${error.status}\\b`), `docs/reference.md gives ${kebab} a status other than ${error.status}`);
  }
});
