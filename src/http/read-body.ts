/**
 * @module http/read-body
 * Reads a request body into one Buffer under a byte limit (and parses a JSON one). Must be
 * called before the handler's first await: uWS delivers data only to a handler attached in the
 * same tick.
 */
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { E } from '../domain/errors.ts';
import { parseJson } from '../domain/parse-json.ts';
import type { Exchange } from './respond.ts';

/** The one reading of a Content-Encoding header: the codings this service knows, else undefined. */
function codingOf(contentEncoding: string): 'identity' | 'gzip' | 'deflate' | undefined {
  const coding = contentEncoding.trim().toLowerCase();
  if (coding === '' || coding === 'identity') return 'identity';
  return coding === 'gzip' || coding === 'deflate' ? coding : undefined;
}

/**
 * Refuses a body in a coding this reader cannot undo, naming it (E.unsupportedMediaType, 415):
 * before this check an unknown coding was parsed as if plain. Absent and `identity` mean no
 * coding; gzip and deflate are decoded (decodeContentEncoding).
 */
export function checkContentEncoding(contentEncoding: string, decoded = true): void {
  const coding = codingOf(contentEncoding);
  if (coding === 'identity') return;
  // gzip and deflate are undone by decodeContentEncoding once the body is read (not for streamed
  // uploads, `decoded` false, which are stored as they arrive).
  if (decoded && coding !== undefined) return;
  const accepted = decoded ? 'unencoded (identity), gzip or deflate' : 'unencoded (identity)';
  throw E.unsupportedMediaType(`Content-Encoding '${contentEncoding.slice(0, 100)}' is not supported: send it ${accepted}`);
}

/** Whether a Content-Length already says the body is over the limit (refused before a byte is read). */
export const declaresTooMuch = (contentLength: string, maxBytes: number): boolean => contentLength !== '' && Number(contentLength) > maxBytes;

/** A chunk uWS hands to onData, copied: uWS reuses its memory once the callback returns. */
export const copyChunk = (chunk: ArrayBuffer): Buffer => Buffer.from(new Uint8Array(chunk));

/**
 * Resolves with the whole body; rejects with E.bodyTooLarge past `maxBytes` (checked against
 * Content-Length up front and against the bytes actually received), and never settles after
 * an abort (the exchange is dead and nothing will be written).
 */
export function readBody(ex: Exchange, maxBytes: number, contentLength: string, contentEncoding = ''): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    try {
      checkContentEncoding(contentEncoding);
    } catch (err) {
      // Unread, the body is dropped by uWS (it knows its length): the connection stays usable.
      reject(err);
      return;
    }
    if (declaresTooMuch(contentLength, maxBytes)) {
      reject(E.bodyTooLarge(maxBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let failed = false;
    ex.res.onData((chunk, isLast) => {
      if (failed) return;
      received += chunk.byteLength;
      if (received > maxBytes) {
        failed = true;
        reject(E.bodyTooLarge(maxBytes));
        return;
      }
      chunks.push(copyChunk(chunk));
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    });
  });
}

/** A JSON request body; E.bodyRequired when there is none, E.bodyNotJson when it does not parse. */
export function parseJsonBody(body: Buffer | undefined): unknown {
  if (!body || body.length === 0) throw E.bodyRequired();
  return parseBodyText(body);
}

/**
 * A request body's JSON, none read as empty text; E.bodyNotJson (with the parser's message) when it
 * does not parse. For routes whose status for a missing body is that of a body that is not JSON.
 */
export function parseBodyText(body: Buffer | undefined): unknown {
  try {
    return parseJson(body && body.length > 0 ? body.toString('utf8') : '');
  } catch (err) {
    throw E.bodyNotJson((err as Error).message);
  }
}

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/**
 * Decodes a `gzip` or `deflate` (zlib, RFC 9110 §8.4.1.2) body off the main thread, refusing
 * output past `maxBytes` with E.bodyTooLarge and a corrupt stream with E.invalidRequest. An
 * identity body is returned as it is (checkContentEncoding refused every other coding before).
 */
export async function decodeContentEncoding(body: Buffer, contentEncoding: string, maxBytes: number): Promise<Buffer> {
  const coding = codingOf(contentEncoding);
  const decode = coding === 'gzip' ? gunzipAsync : coding === 'deflate' ? inflateAsync : undefined;
  if (!decode) return body;
  try {
    return await decode(body, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw E.bodyTooLarge(maxBytes);
    throw E.invalidRequest(`The request body is not valid ${coding} data: ${(err as Error).message}`, [{ path: '', message: `is not valid ${coding} data` }]);
  }
}
