/**
 * @module domain/event-weight
 * How much one event counts as consumption: its type's configured weight, times the event's own
 * `weight` when it carries one (only trusted import code writes that field, e.g. a rating from
 * `npm run eval` or an operator's CSV; the events API does not accept it), raised to `ownPower`.
 * Pure.
 */
import type { TrackedEvent } from './event.ts';

/**
 * Weight of `event` under `eventWeights` (0 for types that are not consumption): the type's weight
 * times the event's own `weight` to the power `ownPower` (1: as given; 0: only whether it is
 * above 0). An own weight of 0 gives 0 whatever the power.
 */
export function eventWeight(eventWeights: Readonly<Record<string, number>>, event: TrackedEvent, ownPower = 1): number {
  const typeWeight = eventWeights[event.event_type] ?? 0;
  const own = event.weight;
  if (!(typeof own === 'number' && Number.isFinite(own) && own >= 0)) return typeWeight;
  return own === 0 ? 0 : typeWeight * (ownPower === 1 ? own : own ** ownPower);
}
