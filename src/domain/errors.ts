/**
 * @module domain/errors
 * The one error class of the service and the catalogue of error kinds. Each factory carries the
 * kind's default HTTP status; a route's STATUS map may override it (see http/respond.ts).
 * Nothing here does I/O.
 */

/** One failing field of a request, as in the problem body's `errors` array. */
export interface FieldError {
  /** Position of the failing entry in a batch (events). */
  index?: number;
  /** A JSON Pointer into the body ("" the body itself), or a query or path parameter's name (domain/field-errors.ts). */
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly kind: string;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;

  constructor(
    kind: string,
    status: number,
    title: string,
    detail: string,
    opts: { errors?: FieldError[]; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(detail, { cause: opts.cause });
    this.name = 'AppError';
    this.kind = kind;
    this.status = status;
    this.title = title;
    this.detail = detail;
    if (opts.errors) this.errors = opts.errors;
    if (opts.headers) this.headers = opts.headers;
  }
}

/** Error kinds with their default status. Every kind is listed in README.md's error table. */
export const E = {
  notFound: (path: string) => new AppError('notFound', 404, 'Not Found', `No route for ${path}`),
  methodNotAllowed: (method: string, path: string, allow: string) =>
    new AppError('methodNotAllowed', 405, 'Method Not Allowed', `${method} is not allowed on ${path}`, {
      headers: { Allow: allow },
    }),
  bodyTooLarge: (maxBytes: number) =>
    new AppError('bodyTooLarge', 413, 'Payload Too Large', `Request body exceeds the limit of ${maxBytes} bytes`),
  bodyNotJson: (reason: string) =>
    new AppError('bodyNotJson', 415, 'Body is not JSON', `The request body is not valid JSON: ${reason}`),
  bodyRequired: () => new AppError('bodyRequired', 400, 'Body required', 'This request needs a JSON body'),
  invalidItem: (detail: string, errors: FieldError[]) =>
    new AppError('invalidItem', 415, 'Item does not match the specification', detail, { errors }),
  invalidRequest: (detail: string, errors?: FieldError[]) =>
    new AppError('invalidRequest', 400, 'Invalid request', detail, errors ? { errors } : {}),
  invalidEvents: (summary: string, errors: FieldError[]) =>
    new AppError('invalidEvents', 400, `Events contain errors: ${summary}`, `${errors.length} event(s) are invalid; nothing was stored`, {
      errors,
    }),
  environmentNotFound: (environment: string) =>
    new AppError('environmentNotFound', 404, 'Environment not found', `Environment '${environment}' is not configured`),
  itemNotFound: (environment: string, itemType: string, itemId: string) =>
    new AppError(
      'itemNotFound',
      404,
      'Item not found',
      `Item '${itemId}' of type '${itemType}' is not known in environment '${environment}'`,
    ),
  listNotFound: () => new AppError('listNotFound', 404, 'List not found', 'This list_key expired or never existed'),
  feedNotFound: (environment: string, feedId: string) =>
    new AppError('feedNotFound', 404, 'Feed not found', `Feed '${feedId}' is not known in environment '${environment}'`),
  importNotFound: (environment: string, importId: string) =>
    new AppError('importNotFound', 404, 'Import not found', `Import '${importId}' is not known in environment '${environment}'`),
  conflict: (detail: string) => new AppError('conflict', 409, 'Conflict', detail),
  unsupportedMediaType: (detail: string) => new AppError('unsupportedMediaType', 415, 'Unsupported Media Type', detail),
  unauthorized: (detail: string) =>
    new AppError('unauthorized', 401, 'Unauthorized', detail, {
      headers: { 'WWW-Authenticate': 'Bearer realm="affinity"' },
    }),
  unavailable: (detail: string, retryAfterSec: number) =>
    new AppError('unavailable', 503, 'Service Unavailable', detail, {
      headers: { 'Retry-After': String(retryAfterSec) },
    }),
  modelBuildFailed: (detail: string) =>
    new AppError('modelBuildFailed', 500, 'Model build failed', `${detail}; the previous model keeps serving`),
  internal: (cause: unknown) =>
    new AppError('internal', 500, 'Internal Server Error', 'The request could not be processed', { cause }),
} as const;

export type ErrorKind = keyof typeof E;
