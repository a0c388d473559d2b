// The one notation problem bodies name fields in: JSON Pointer (RFC 6901) into the body, from
// hand-written checks (pointer) and from Ajv's errors (ajvFieldErrors) alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { ajvFieldErrors, fieldErrorsText, pointer } from '../../../src/domain/field-errors.ts';

test('a pointer escapes ~ and / in its segments and names the body itself with ""', () => {
  assert.equal(pointer('lists', 0, 'list_size'), '/lists/0/list_size');
  assert.equal(pointer('mapping', 'a/b~c', 'x.y'), '/mapping/a~1b~0c/x.y');
  assert.equal(pointer(), '');
});

test("Ajv's errors name the failing member itself, an anyOf stands for its branches, and repeats are dropped", () => {
  const validate = new Ajv({ allErrors: true }).compile({
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: {
      id: { type: 'string' },
      tags: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] } },
      'a/b': { type: 'integer' },
    },
  });
  assert.equal(validate({ tags: ['x', 5], colour: 'red', 'a/b': 'one' }), false);
  const errors = ajvFieldErrors([...validate.errors!, ...validate.errors!], { notAField: 'is not a field', noShape: 'has no documented shape' });
  const byPath = (list: Array<{ path: string; message: string }>) => [...list].sort((x, y) => x.path.localeCompare(y.path));
  assert.deepEqual(byPath(errors), [
    { path: '/a~1b', message: 'must be integer' },
    { path: '/colour', message: 'is not a field' },
    { path: '/id', message: 'is required' },
    { path: '/tags/1', message: 'has no documented shape' },
  ]);
  assert.equal(fieldErrorsText([{ path: '', message: 'must be an object' }, { path: '/id', message: 'is required' }]), 'the body must be an object; /id is required');
});
