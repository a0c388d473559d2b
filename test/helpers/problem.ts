// RFC 9457 problem bodies as every error response of the service writes them (DESIGN.md), and
// the one assertion of their shape that the integration tests share.
import assert from 'node:assert/strict';

export interface FieldErrorEntry {
  index?: number;
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldErrorEntry[];
}

/** Asserts a problem response (status, media type, RFC 9457 fields and nothing else); returns its body. */
export async function assertProblem(res: Response, status: number, kind: string): Promise<Problem> {
  const text = await res.text();
  assert.equal(res.status, status, `status (body: ${text.slice(0, 500)})`);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  const body = JSON.parse(text) as Problem;
  assert.equal(body.type, `urn:affinity:problem:${kind}`);
  assert.equal(body.status, status);
  assert.ok(typeof body.title === 'string' && body.title.length > 0, 'title is a non-empty string');
  assert.ok(typeof body.detail === 'string' && body.detail.length > 0, 'detail is a non-empty string');
  for (const key of Object.keys(body)) {
    assert.ok(['type', 'title', 'status', 'detail', 'errors'].includes(key), `unexpected problem field '${key}'`);
  }
  return body;
}
