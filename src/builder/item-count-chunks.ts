/**
 * @module builder/item-count-chunks
 * One day's per-item counts of one kind, held whole (4 bytes per item) and stored as chunks of
 * COUNT_CHUNK_ITEMS (1 KB, within an LMDB leaf page): each chunk is read from LMDB once, before its
 * first count, so what is held is always what is stored plus what came since; a flush writes the
 * chunks counted in since their last write. Read, added to and written back per item, the report
 * counters' clicked items were a get and a put per clicked item (~1,000 a second at the events
 * bench's steady load, issue 12); the request counter's recommended items had the same problem
 * as whole-day records (builder/request-counts.ts).
 */
import type { Database, Key } from 'lmdb';
import { grown, quarterMore } from '../domain/grown.ts';
import { copyU32 } from '../store/model-layout.ts';
import { COUNT_CHUNK_ITEMS } from '../store/report-keys.ts';

/** A chunk's state bits: its stored value read; counted in since it was last written. */
const READ = 1;
const UNWRITTEN = 2;

export class ItemCountChunks {
  readonly #state: Database;
  readonly #key: (chunk: number) => Key;
  #counts = new Uint32Array(0);
  #chunkState = new Uint8Array(0);
  /** Chunks counted in since written, oldest first. */
  readonly #queue: number[] = [];

  /** `key`: where chunk `chunk` is stored in `state` (model-state). */
  constructor(state: Database, key: (chunk: number) => Key) {
    this.#state = state;
    this.#key = key;
  }

  get pending(): boolean {
    return this.#queue.length > 0;
  }

  /** Adds `n` to the count of `item`; returns the count before. */
  add(item: number, n: number): number {
    const chunk = Math.floor(item / COUNT_CHUNK_ITEMS);
    if (chunk >= this.#chunkState.length) {
      const chunks = quarterMore(this.#chunkState.length, chunk + 1);
      this.#counts = grown(this.#counts, chunks * COUNT_CHUNK_ITEMS);
      this.#chunkState = grown(this.#chunkState, chunks);
    }
    if ((this.#chunkState[chunk]! & READ) === 0) {
      this.#chunkState[chunk]! |= READ;
      const stored = this.#state.get(this.#key(chunk)) as Uint8Array | undefined;
      this.#counts.set(copyU32(stored).subarray(0, COUNT_CHUNK_ITEMS), chunk * COUNT_CHUNK_ITEMS);
    }
    if ((this.#chunkState[chunk]! & UNWRITTEN) === 0) {
      this.#chunkState[chunk]! |= UNWRITTEN;
      this.#queue.push(chunk);
    }
    const before = this.#counts[item]!;
    this.#counts[item] = before + n;
    return before;
  }

  /**
   * Takes up to `budget` of the chunks counted in (oldest first); returns how many and their
   * write, to run inside the flush's transaction (again if it is retried).
   */
  take(budget: number): { taken: number; write: () => void } {
    // In key order: LMDB then walks its leaf pages in order (builder/cooccurrence.ts measured it).
    const chunks = this.#queue.splice(0, budget).sort((a, b) => a - b);
    for (const chunk of chunks) this.#chunkState[chunk]! &= ~UNWRITTEN;
    // A view over what is held, read when the transaction runs: nothing changes it before.
    const buffer = this.#counts.buffer;
    const bytes = COUNT_CHUNK_ITEMS * 4;
    return { taken: chunks.length, write: () => {
      for (const chunk of chunks) this.#state.put(this.#key(chunk), Buffer.from(buffer, chunk * bytes, bytes));
    } };
  }
}
