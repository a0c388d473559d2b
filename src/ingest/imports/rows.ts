/**
 * @module ingest/imports/rows
 * One file row with its `operation` → a catalog write, validated as the Items API validates:
 * ADD creates or replaces the whole item (as PUT); UPDATE changes the given fields of an
 * existing item and keeps the others (`null` removes a field; an unknown item is rejected);
 * DELETE removes the item (as DELETE; an unknown item is rejected). `environment` may be left
 * out (the inbox says it) but must match when given. Operations are read case-insensitively.
 */
import type { Item } from '../../domain/item.ts';
import type { CatalogWrite } from '../../store/catalog.ts';
import { toItem } from '../normalize.ts';

export const OPERATIONS = ['ADD', 'UPDATE', 'DELETE'] as const;

function identity(fields: Record<string, unknown>, environment: string, itemTypes: readonly string[]): { itemType: string; itemId: string } | { reason: string } {
  const { item_type: itemType, item_id: itemId } = fields;
  if (typeof itemType !== 'string' || itemType === '') return { reason: 'item_type is required' };
  if (typeof itemId !== 'string' || itemId === '') return { reason: 'item_id is required' };
  if (!itemTypes.includes(itemType)) return { reason: `item_type '${itemType}' is not an item type of environment '${environment}' (${itemTypes.join(', ')})` };
  return { itemType, itemId };
}

/** The catalog write a row asks for, or the reason it cannot be applied. */
export function rowToWrite(row: Record<string, unknown>, environment: string, itemTypes: readonly string[]): CatalogWrite | { reason: string } {
  const { operation, ...fields } = row;
  if (operation === undefined) return { reason: `operation is required (${OPERATIONS.join(', ')})` };
  const op = typeof operation === 'string' ? operation.trim().toUpperCase() : '';
  if (!(OPERATIONS as readonly string[]).includes(op)) return { reason: `operation '${String(operation).slice(0, 64)}' is not one of ${OPERATIONS.join(', ')}` };
  if (fields.environment !== undefined && fields.environment !== environment) {
    return { reason: `environment '${String(fields.environment).slice(0, 64)}' is not this inbox's '${environment}'` };
  }
  if (op === 'ADD') {
    const result = toItem({ environment, ...fields }, environment, itemTypes);
    return 'reason' in result ? result : { op: 'put', item: result.item };
  }
  const id = identity(fields, environment, itemTypes);
  if ('reason' in id) return id;
  if (op === 'DELETE') return { op: 'remove', environment, itemType: id.itemType, itemId: id.itemId };
  return {
    op: 'patch',
    environment,
    itemType: id.itemType,
    itemId: id.itemId,
    patch: (existing: Item) => {
      const merged: Record<string, unknown> = { ...existing };
      for (const [key, value] of Object.entries(fields)) {
        // Assigning `__proto__` would set the prototype instead of a field.
        if (key === '__proto__') return '__proto__ is a reserved name that cannot be stored';
        if (value === null) delete merged[key];
        else merged[key] = value;
      }
      const result = toItem({ environment, ...merged }, environment, itemTypes);
      return 'reason' in result ? result.reason : result.item;
    },
  };
}
