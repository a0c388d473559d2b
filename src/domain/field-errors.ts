/**
 * @module domain/field-errors
 * How a problem body names the fields a request got wrong, in one notation: `errors[].path` is a
 * JSON Pointer (RFC 6901, as RFC 9457 suggests) into the body, `/lists/0/list_size`, with ""
 * for the body itself; a query or path parameter is named bare (`limit`). Ajv's errors map here
 * too, for every schema that checks a body (recommendation requests, items, feeds).
 */
import type { ErrorObject } from 'ajv';
import type { FieldError } from './errors.ts';

/** The JSON Pointer of a field: pointer('lists', 0, 'list_size') → `/lists/0/list_size`. */
export function pointer(...segments: ReadonlyArray<string | number>): string {
  let out = '';
  for (const segment of segments) out += `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`;
  return out;
}

/** What a schema's errors say beyond Ajv's own messages. */
export interface AjvWording {
  /** For a property the schema does not have. */
  notAField: string | ((e: ErrorObject) => string);
  /** For a value that matches none of an anyOf's shapes (its branches' own errors are dropped). */
  noShape: string;
  /** For a `format` failure; Ajv's message by default. */
  format?: string;
}

/**
 * Ajv's errors as field errors: a missing or unknown property is named by its own pointer (Ajv
 * names its parent), an anyOf stands for its branches, and a field is named once, by its first
 * error (an empty id fails its length and its pattern: the length says enough).
 */
export function ajvFieldErrors(errors: readonly ErrorObject[], wording: AjvWording): FieldError[] {
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/`);
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (anyOfs.some((p) => e.schemaPath.startsWith(p))) continue;
    const params = e.params as { additionalProperty?: string; missingProperty?: string };
    let path = e.instancePath;
    let message: string;
    if (e.keyword === 'additionalProperties') {
      path += pointer(String(params.additionalProperty));
      message = typeof wording.notAField === 'string' ? wording.notAField : wording.notAField(e);
    } else if (e.keyword === 'required') {
      path += pointer(String(params.missingProperty));
      message = 'is required';
    } else if (e.keyword === 'anyOf') {
      message = wording.noShape;
    } else if (e.keyword === 'format' && wording.format) {
      message = wording.format;
    } else {
      message = e.message ?? 'is invalid';
    }
    if (seen.has(path)) continue;
    seen.add(path);
    out.push({ path, message });
  }
  return out;
}

/** A field error as prose, for a problem's title or detail: the body itself is "the body". */
export const fieldErrorText = (e: FieldError): string => `${e.path || 'the body'} ${e.message}`;

/** Field errors as one line of prose, for a problem's detail or a report's reason. */
export const fieldErrorsText = (errors: readonly FieldError[]): string => errors.map(fieldErrorText).join('; ');
