/**
 * @module http/upload
 * Streams a request body to a file under a byte limit (the limit checks and chunk copies are
 * read-body.ts's, which reads a body into memory), for uploads far larger than the JSON
 * body limit. Must be called before the handler's first await (uWS delivers data only to a
 * handler attached in the same tick); reading is paused at once, so nothing is received until
 * the handler has authorised the request and calls saveTo. Backpressure: reading pauses while
 * the file stream's buffer is full.
 */
import { createWriteStream, rmSync, type WriteStream } from 'node:fs';
import { E } from '../domain/errors.ts';
import { copyChunk, declaresTooMuch } from './read-body.ts';
import type { Exchange } from './respond.ts';

export interface Upload {
  /**
   * Writes the body to `path`; resolves with its size once the last byte is on disk. Rejects with
   * E.bodyTooLarge past the limit, or with an Error when the client goes away (the partial file
   * removed either way).
   */
  saveTo(path: string): Promise<number>;
  /** Stops receiving (the error response closes the connection) and removes the partial file. */
  discard(): void;
}

export function receiveUpload(ex: Exchange, maxBytes: number, contentLength: string): Upload {
  const res = ex.res;
  let file: WriteStream | undefined;
  let path: string | undefined;
  let received = 0;
  let finished = false;
  let fail: ((err: unknown) => void) | undefined;
  /** Chunks that arrived before saveTo (uWS may deliver some before the pause takes effect). */
  const early: Buffer[] = [];
  let lastSeen = false;
  let onChunk: ((chunk: Buffer, isLast: boolean) => void) | undefined;

  /** Stops writing and removes the partial file; resolves once it is gone (the stream may still be opening it). */
  const cleanup = (): Promise<void> => {
    finished = true;
    const out = file;
    const target = path;
    if (!out || !target) return Promise.resolve();
    return new Promise((resolve) => {
      const remove = () => {
        rmSync(target, { force: true });
        resolve();
      };
      if (out.closed) remove();
      else {
        out.once('close', remove);
        out.destroy();
      }
    });
  };
  ex.onAbort = () => {
    // The handler's await ends (nothing is written to an aborted client) so the request is not left in flight.
    if (fail) fail(new Error('the client went away during the upload'));
    else if (!finished) void cleanup();
  };
  res.onData((chunk, isLast) => {
    const copy = copyChunk(chunk);
    if (onChunk) onChunk(copy, isLast);
    else {
      early.push(copy);
      lastSeen = isLast;
    }
  });
  res.pause();

  return {
    discard() {
      if (!finished) void cleanup();
    },
    saveTo(target: string): Promise<number> {
      return new Promise((resolve, reject) => {
        if (declaresTooMuch(contentLength, maxBytes)) {
          finished = true;
          reject(E.bodyTooLarge(maxBytes));
          return;
        }
        path = target;
        const out = createWriteStream(target);
        file = out;
        fail = (err) => {
          if (finished) return;
          // Rejected once the partial file is gone, so the error answer leaves nothing behind.
          void cleanup().then(() => reject(err));
        };
        out.on('error', (err) => fail?.(err));
        onChunk = (chunk, isLast) => {
          if (finished) return;
          received += chunk.byteLength;
          if (received > maxBytes) {
            fail?.(E.bodyTooLarge(maxBytes));
            return;
          }
          if (!out.write(chunk) && !isLast) {
            res.pause();
            out.once('drain', () => {
              if (!finished && !ex.aborted) res.resume();
            });
          }
          if (isLast) {
            out.end(() => {
              if (finished) return;
              finished = true;
              resolve(received);
            });
          }
        };
        for (const chunk of early.splice(0)) onChunk(chunk, false);
        if (lastSeen) onChunk(Buffer.alloc(0), true);
        // Also when the whole body came early: a paused socket would not read the next request.
        if (!ex.aborted) res.resume();
      });
    },
  };
}
