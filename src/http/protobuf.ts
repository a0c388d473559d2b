/**
 * @module http/protobuf
 * The protobuf wire format (proto/affinity.proto, protobufjs) of the events and recommendation
 * endpoints: decodes a body into the same plain object the JSON parser yields, so the same
 * validation and errors follow, and encodes a recommendation answer. Field names are kept as
 * written in the .proto (the JSON names). Loaded once by the composition root, not on import.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { E } from '../domain/errors.ts';

export const PROTOBUF_MEDIA_TYPE = 'application/x-protobuf';
/** Where the published schema lives, one folder above src/ and dist/ alike. */
export const PROTO_PATH = join(import.meta.dirname, '..', '..', 'proto', 'affinity.proto');

/** `application/x-protobuf` or `application/protobuf` (RFC-less but common), with parameters. */
export function isProtobuf(mediaType: string): boolean {
  if (mediaType === 'application/json') return false; // nearly every request: no split and lower-casing
  const type = mediaType.split(';', 1)[0]!.trim().toLowerCase();
  return type === PROTOBUF_MEDIA_TYPE || type === 'application/protobuf';
}

/** Whether an Accept header asks for protobuf (no q-value ranking: any mention wins). */
export function acceptsProtobuf(accept: string): boolean {
  return accept.includes(PROTOBUF_MEDIA_TYPE) || accept.includes('application/protobuf');
}

const TO_OBJECT = { longs: Number, defaults: false, arrays: false, objects: false } as const;

type Obj = Record<string, unknown>;

export class ProtobufCodec {
  readonly #eventBatch: protobuf.Type;
  readonly #request: protobuf.Type;
  readonly #response: protobuf.Type;

  constructor(protoPath = PROTO_PATH) {
    const { root } = protobuf.parse(readFileSync(protoPath, 'utf8'), { keepCase: true });
    this.#eventBatch = root.lookupType('affinity.v1.EventBatch');
    this.#request = root.lookupType('affinity.v1.RecommendationRequest');
    this.#response = root.lookupType('affinity.v1.RecommendationResponse');
  }

  #decode(type: protobuf.Type, body: Buffer | undefined): Obj {
    if (!body || body.length === 0) throw E.bodyRequired();
    try {
      return type.toObject(type.decode(body), TO_OBJECT);
    } catch (err) {
      throw E.invalidRequest(`The body is not a valid ${type.fullName.slice(1)} protobuf message: ${(err as Error).message}`, [
        { path: '', message: `is not a valid ${type.name} message` },
      ]);
    }
  }

  /** An EventBatch as `{ events: [...] }`, as the JSON body would be. */
  decodeEvents(body: Buffer | undefined): Obj {
    return this.#decode(this.#eventBatch, body);
  }

  /** A RecommendationRequest in the JSON request's shape (filters, histories unwrapped). */
  decodeRecommendationRequest(body: Buffer | undefined): Obj {
    const request = this.#decode(this.#request, body);
    for (const list of (request.lists as Obj[] | undefined) ?? []) {
      const filters = list.filters as Obj | undefined;
      if (!filters) continue;
      if (filters.categories) filters.categories = (filters.categories as Array<{ path?: string[] }>).map((c) => c.path ?? []);
      if (filters.item_attributes) {
        const attributes = filters.item_attributes as Record<string, { values?: string[] }>;
        filters.item_attributes = Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, v.values ?? []]));
      }
    }
    if (request.histories) {
      const histories = request.histories as Record<string, { items?: unknown[] }>;
      request.histories = Object.fromEntries(Object.entries(histories).map(([k, v]) => [k, v.items ?? []]));
    }
    return request;
  }

  /** Encodes the JSON answer of a recommendation request (information fields as JSON text). */
  encodeRecommendationResponse(answer: { lists: ReadonlyArray<{ items: readonly object[] }> }): Uint8Array {
    const message = {
      ...answer,
      lists: answer.lists.map((list) => ({
        ...list,
        items: (list.items as readonly Obj[]).map(({ information_field, ...item }) =>
          information_field === undefined ? item : { ...item, information_field_json: JSON.stringify(information_field) },
        ),
      })),
    };
    return this.#response.encode(this.#response.fromObject(message)).finish();
  }
}
