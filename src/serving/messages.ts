/**
 * @module serving/messages
 * The thread hop's wire format, both ways. A rank task crosses as one JSON string holding only
 * what the request says (ids, sizes, filters); the worker adds each list's configuration
 * (strategy, item types, configured filters) from its own copy of the environments. A batch's
 * ranked lists come back packed: all their text (ids and items JSON) in one string and all their
 * ix in one transferred Uint32Array, with a small layout array; the main thread cuts them apart.
 * The ids and the items JSON are two strings: a cached list's ids (a slice, which keeps the
 * string it was cut from) then keep only the batch's ids, not the answers already written.
 * Structured clone of the object graphs this replaces cost both threads a per-property walk and
 * an ArrayBuffer per list. Errors, checks and lists with information fields (rare) still travel
 * as objects.
 */
import type { Config } from '../config/types.ts';
import type { ListFilters } from '../domain/list-filters.ts';
import { parseJson } from '../domain/parse-json.ts';
import type { CheckOutcome, CheckTask, ListTask, RankedList, RankOutcome, RankTask } from './task.ts';

/** What a request asks of the ranking (the validated request, without what only the route needs). */
interface RankRequest {
  userId?: string;
  deviceId: string;
  context?: RankTask['context'];
  history: RankTask['history'];
  exclude: string[];
  lists: ReadonlyArray<{ name: string; size: number; limit: number; filters?: ListFilters; content: ListTask['content'] }>;
}

/**
 * What a ranking worker posts once its engine is built (the value: its threadId). The pool waits
 * for it before it stops a worker: one stopped while it opens LMDB aborts the whole process.
 */
export const ENGINE_BUILT = 'affinityEngineBuilt';

/** A rank task on the wire: JSON text of [environment, nowSec, userId, deviceId, context, history, exclude, lists]. */
export type WireRankTask = string;

/** One list on the wire: [name, size, limit, filters, content]. */
type WireList = [string, number, number, ListFilters | null, ListTask['content']];
type WireTask = [string, number, string | null, string, RankTask['context'] | null, RankTask['history'], string[], WireList[]];

/** Main thread: the task of a validated request (its list names are the environment's). */
export function encodeRankTask(environment: string, nowSec: number, request: RankRequest): WireRankTask {
  const lists: WireList[] = [];
  for (const l of request.lists) lists.push([l.name, l.size, l.limit, l.filters ?? null, l.content]);
  const task: WireTask = [environment, nowSec, request.userId ?? null, request.deviceId, request.context ?? null, request.history, request.exclude, lists];
  return JSON.stringify(task);
}

/** Worker: the RankTask of a wire task, each list completed from the environment's configuration. */
export function decodeRankTask(text: WireRankTask, environments: Config['environments']): RankTask {
  // Not JSON.parse: it would enter the request's short ids in this worker's string table (domain/parse-json.ts).
  const [environment, nowSec, userId, deviceId, context, history, exclude, wireLists] = parseJson(text) as WireTask;
  const env = environments[environment];
  if (!env) throw new Error(`environment '${environment}' is not configured in this worker`);
  const lists: ListTask[] = [];
  for (const [name, size, limit, filters, content] of wireLists) {
    const config = env.lists[name];
    if (!config) throw new Error(`list '${name}' is not configured in environment '${environment}'`);
    const all: ListFilters[] = [];
    if (config.filters) all.push(config.filters);
    if (filters) all.push(filters);
    lists.push({
      strategy: config.strategy,
      ...(config.fallback ? { fallback: config.fallback } : {}),
      ...(config.options ? { options: config.options } : {}),
      size,
      limit,
      itemTypes: config.itemTypes,
      filters: all,
      ...(config.informationField ? { informationField: config.informationField } : {}),
      content,
    });
  }
  return { environment, nowSec, ...(userId !== null ? { userId } : {}), deviceId, ...(context ? { context } : {}), history, exclude, lists };
}

/** `expired`: the batch waited past its deadline and was not ranked (the requester answered 503). */
export type BatchOutcome = RankOutcome | CheckOutcome | { failed: string } | { expired: true };

/**
 * A batch's answer: the outcomes in task order (`undefined` where a task's lists are packed),
 * how far this worker has read the notice journal, and the packed lists. `layout` holds, per
 * packed task in order, its list count and then per list the ids' length, the items JSON's
 * length, the ix count and the items shown; the lists' ids, items and ix follow one another
 * in that order. `ix` and `layout` are plain arrays of small integers, cloned with the reply:
 * typed arrays there (transferred) were a new ArrayBuffer per batch, and a worker collecting on
 * its own thread (--single-threaded-gc) with external memory allocated per batch promoted what
 * each scavenge found alive: at 1,000,000 items ~3.5 MB per scavenge, 5–20 ms pauses (an
 * in-process run of the engine in batches of 8: 121 of 123 scavenges over 5 ms, with plain
 * arrays none).
 */
export interface BatchReply {
  threadId: number;
  seq: number;
  outcomes: Array<BatchOutcome | undefined>;
  ids: string;
  items: string;
  ix: number[];
  layout: number[];
}

/** Worker: packs the outcomes whose lists can be packed (no information fields). */
export function packReply(threadId: number, seq: number, outcomes: BatchOutcome[]): BatchReply {
  const packable = (o: BatchOutcome): o is { lists: RankedList[] } => 'lists' in o && o.lists.every((l) => l.information === undefined);
  const ix: number[] = [];
  const layout: number[] = [];
  let ids = '';
  let items = '';
  const left: Array<BatchOutcome | undefined> = [];
  for (const o of outcomes) {
    if (!packable(o)) {
      left.push(o);
      continue;
    }
    left.push(undefined);
    layout.push(o.lists.length);
    for (const l of o.lists) {
      ids += l.ids;
      items += l.itemsJson;
      for (let k = 0; k < l.ix.length; k++) ix.push(l.ix[k]!);
      layout.push(l.ids.length, l.itemsJson.length, l.ix.length, l.shown);
    }
  }
  return { threadId, seq, outcomes: left, ids, items, ix, layout };
}

/** Main thread: every task's outcome, the packed lists cut out of the reply (views, not copies). */
export function unpackReply({ outcomes, ids, items, ix: ixList, layout }: BatchReply): BatchOutcome[] {
  const out: BatchOutcome[] = [];
  // One array for the batch on this side; each list's ix is a view of it.
  const ix = Uint32Array.from(ixList);
  let at = 0;
  let idsAt = 0;
  let itemsAt = 0;
  let ixAt = 0;
  for (const o of outcomes) {
    if (o !== undefined) {
      out.push(o);
      continue;
    }
    const count = layout[at++]!;
    const lists: RankedList[] = [];
    for (let i = 0; i < count; i++) {
      const idsEnd = idsAt + layout[at++]!;
      const itemsEnd = itemsAt + layout[at++]!;
      const ixEnd = ixAt + layout[at++]!;
      lists.push({ ids: ids.slice(idsAt, idsEnd), itemsJson: items.slice(itemsAt, itemsEnd), ix: ix.subarray(ixAt, ixEnd), shown: layout[at++]! });
      idsAt = idsEnd;
      itemsAt = itemsEnd;
      ixAt = ixEnd;
    }
    out.push({ lists });
  }
  return out;
}

/** Main thread: a batch's tasks as they cross (check tasks stay objects: they are rare). */
export type WireTaskOrCheck = WireRankTask | CheckTask;
