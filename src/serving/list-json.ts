/**
 * @module serving/list-json
 * A ranked list's wire pieces, shared by the ranking worker (which writes a response's items as
 * it ranks them) and the HTTP route (which slices cached lists): the `items` array as JSON text,
 * and the id string a list crosses the thread hop and sits in the list cache as. Written out
 * rather than built as objects for JSON.stringify: it runs for every list of every request.
 */

/** Joins item ids (they hold no control characters) into one string: one heap object per list. */
export const LIST_ID_SEPARATOR = '\n';

/** The ids of a joined list of `count` items (an empty string is no item, not one empty id). */
export function splitIds(ids: string, count: number, limit = count): string[] {
  return count === 0 ? [] : ids.split(LIST_ID_SEPARATOR, limit);
}

/**
 * The `items` array as JSON text: items `offset` (from 1) to offset + limit - 1 of a list, ranked
 * by their place in it; `information` runs alongside `itemIds`. Returns the text and its length.
 */
export function itemsJson(itemIds: readonly string[], information: ReadonlyArray<string | undefined> | undefined, offset: number, limit: number): { json: string; count: number } {
  const end = Math.min(itemIds.length, offset - 1 + limit);
  let json = '[';
  for (let i = offset - 1; i < end; i++) {
    if (i >= offset) json += ',';
    json += `{"item_id":${JSON.stringify(itemIds[i])},"rank":${i + 1}`;
    const info = information?.[i];
    if (info !== undefined) json += `,"information_field":${JSON.stringify(info)}`;
    json += '}';
  }
  return { json: `${json}]`, count: Math.max(0, end - (offset - 1)) };
}
