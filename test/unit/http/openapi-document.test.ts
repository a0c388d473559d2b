import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildOpenApi, openApiPath } from '../../../src/http/openapi/document.ts';

test('a route pattern becomes an OpenAPI path template', () => {
  assert.equal(openApiPath('/api/:environment/items/:item_type/:item_id'), '/api/{environment}/items/{item_type}/{item_id}');
});

test('a registered route the document does not describe fails the build', () => {
  assert.throws(() => buildOpenApi([{ method: 'get', pattern: '/api/:environment/secret', status: {}, cors: false }], '0'), /GET \/api\/:environment\/secret is not described/);
});

test('a described operation that no route registers fails the build', () => {
  assert.throws(() => buildOpenApi([{ method: 'get', pattern: '/health', status: {}, cors: false }], '0'), /described but not registered: .*GET \/ready/);
});
