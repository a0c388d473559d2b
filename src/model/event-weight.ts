/**
 * @module model/event-weight
 * How much one event counts as consumption: its type's configured weight, times the event's own
 * `weight` when it carries one (only trusted import code writes that field, e.g. a rating from
 * `npm run eval` or an operator's CSV; the events API does not accept it). Pure.
 */
import type { TrackedEvent } from '../domain/event.ts';

/** Weight of `event` under `eventWeights` (0 for types that are not consumption). */
export function eventWeight(eventWeights: Readonly<Record<string, number>>, event: TrackedEvent): number {
  const typeWeight = eventWeights[event.event_type] ?? 0;
  const own = event.weight;
  return typeof own === 'number' && Number.isFinite(own) && own >= 0 ? typeWeight * own : typeWeight;
}
