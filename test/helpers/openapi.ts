// Checks real responses against the service's OpenAPI document (/api/openapi.json): the
// operation exists, the status is documented, and a JSON body validates against the documented
// schema (JSON Schema 2020-12 through Ajv, as OpenAPI 3.1 defines its schemas).
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  components: { schemas: Record<string, unknown> };
}

export class ResponseChecker {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly doc: OpenApiDocument;
  /** `METHOD path` of every response checked, for the coverage assertion. */
  readonly checked = new Set<string>();

  constructor(doc: OpenApiDocument) {
    this.doc = doc;
    addFormats.default(this.#ajv, ['date-time']);
    this.#ajv.addSchema(doc, 'openapi');
  }

  /** Asserts `res` (already read into `text`) is documented for `method path` and its body validates. */
  check(method: string, path: string, res: Response, text: string): void {
    const operation = this.doc.paths[path]?.[method.toLowerCase()];
    assert.ok(operation, `${method} ${path} is in the document`);
    this.checked.add(`${method.toUpperCase()} ${path}`);
    const response = operation.responses[String(res.status)];
    assert.ok(response, `${method} ${path}: status ${res.status} is documented (body: ${text.slice(0, 300)})`);
    const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (text === '') {
      assert.ok(!response.content || Object.keys(response.content).length === 0 || mediaType === '', `${method} ${path} ${res.status}: an empty body is documented`);
      return;
    }
    const documented = response.content?.[mediaType];
    assert.ok(documented, `${method} ${path} ${res.status}: media type ${mediaType} is documented (${Object.keys(response.content ?? {}).join(', ')})`);
    if (!documented.schema || !mediaType.endsWith('json')) return;
    const ref = (documented.schema as { $ref?: string }).$ref;
    assert.ok(ref, 'the documented schema is a component');
    const validate = this.#ajv.getSchema(`openapi${ref}`);
    assert.ok(validate, `schema ${ref} compiles`);
    const body: unknown = JSON.parse(text);
    assert.ok(validate(body), `${method} ${path} ${res.status} body matches ${ref}: ${JSON.stringify(validate.errors)}\n${text.slice(0, 500)}`);
  }
}
