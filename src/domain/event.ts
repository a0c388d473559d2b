/**
 * @module domain/event
 * The 17 event types of SPEC.md with their required and optional fields, the standard page
 * types and channels, and the pure check of one event against them. No I/O.
 */

/** How a field's value is checked. `user` is a string that may be null (anonymous, DESIGN.md). */
export type FieldKind = 'id' | 'user' | 'label' | 'integer' | 'number' | 'basket';

type Fields = Readonly<Record<string, FieldKind>>;

export interface EventTypeSpec {
  required: Fields;
  optional: Fields;
}

const VISIT = { page_type: 'label', device_id: 'id', user_id: 'user', channel: 'label' } as const;
const ACTION = { action_item: 'id', action_item_type: 'label' } as const;
const RECOMMENDATION = { ...VISIT, ...ACTION, list_name: 'label', request_id: 'id', user_group: 'label' } as const;
const BATCH = { ...VISIT, ...ACTION, list_name: 'label', request_id: 'id', campaign_id: 'id' } as const;
const SESSION = { page_type: 'label', session_id: 'id', ...ACTION, list_name: 'label', request_id: 'id', channel: 'label' } as const;

/** SPEC.md's event table, field for field. */
export const EVENT_TYPES: Readonly<Record<string, EventTypeSpec>> = {
  detail_pageview: { required: { ...VISIT, ...ACTION }, optional: {} },
  page_visit: { required: VISIT, optional: {} },
  item_interaction: { required: { ...VISIT, ...ACTION, interaction_type: 'label' }, optional: {} },
  user_interaction: { required: { ...VISIT, interaction_type: 'label' }, optional: {} },
  impression: { required: RECOMMENDATION, optional: {} },
  click_on_recommendation: { required: RECOMMENDATION, optional: {} },
  start_subscription: {
    required: VISIT,
    optional: { subscription_type: 'label', context_item: 'id', context_item_type: 'label' },
  },
  cancel_subscription: { required: VISIT, optional: { subscription_type: 'label' } },
  checkpoint: { required: { ...VISIT, ...ACTION, checkpoint_type: 'label' }, optional: { progress: 'number' } },
  add_to_cart: { required: { ...VISIT, ...ACTION, amount: 'integer' }, optional: { basket_content: 'basket' } },
  remove_from_cart: {
    required: { device_id: 'id', ...ACTION, amount: 'integer', channel: 'label' },
    optional: { user_id: 'user', basket_content: 'basket' },
  },
  purchase: {
    required: { device_id: 'id', ...ACTION, amount: 'integer', purchased_price: 'number', channel: 'label' },
    optional: { user_id: 'user', original_price: 'number' },
  },
  batch_open: { required: { ...VISIT, campaign_id: 'id' }, optional: {} },
  batch_impression: { required: BATCH, optional: {} },
  batch_click_on_recommendation: { required: BATCH, optional: {} },
  session_impression: { required: SESSION, optional: {} },
  session_click_on_recommendation: { required: SESSION, optional: {} },
};

/** Fields every event may carry: `event_id` makes a retried batch idempotent. */
export const COMMON_OPTIONAL: Fields = { event_id: 'id' };

export const STANDARD_PAGE_TYPES = [
  'home',
  'category',
  'article_detail',
  'product_detail',
  'video_detail',
  'checkout',
  // Also named as page types of events in SPEC.md's field table.
  'overview',
  'detail',
  'email',
];

export const RECOMMENDATION_CHANNELS = [
  'www',
  'www-desktop',
  'www-mobile',
  'app',
  'app-ios',
  'app-android',
  'app-audio',
  'app-audio-ios',
  'app-audio-android',
];

/** DESIGN.md: event channels are the recommendation channels plus SPEC.md's event examples. */
export const EVENT_CHANNELS = [...RECOMMENDATION_CHANNELS, 'mobile-app', 'test'];

export const MAX_ID_LENGTH = 256;
export const MAX_BASKET_ENTRIES = 1000;

/** The values an environment accepts where SPEC.md says "agreed with the operator". */
export interface EventVocabulary {
  pageTypes: ReadonlySet<string>;
  channels: ReadonlySet<string>;
  listNames: ReadonlySet<string>;
}

/** One event as stored: the fields as sent, checked. */
export type TrackedEvent = Record<string, unknown> & { event_type: string };

function checkValue(kind: FieldKind, value: unknown): string | undefined {
  switch (kind) {
    case 'user':
      if (value === null) return undefined;
    // falls through: a present user_id is an id
    case 'id':
    case 'label':
      if (typeof value !== 'string') return 'must be a string';
      if (value.length === 0) return 'must not be empty';
      if (value.length > MAX_ID_LENGTH) return `must be at most ${MAX_ID_LENGTH} characters`;
      return undefined;
    case 'integer':
      return Number.isSafeInteger(value) ? undefined : 'must be an integer';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
    case 'basket': {
      if (!Array.isArray(value)) return 'must be an array of items';
      if (value.length > MAX_BASKET_ENTRIES) return `must have at most ${MAX_BASKET_ENTRIES} items`;
      for (let i = 0; i < value.length; i++) {
        const entry: unknown = value[i];
        if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `[${i}] must be an object`;
        const id = (entry as Record<string, unknown>).id;
        if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) return `[${i}].id must be a string`;
        for (const v of Object.values(entry)) {
          if (v !== null && typeof v === 'object') return `[${i}] fields must be strings, numbers or booleans`;
          if (typeof v === 'string' && v.length > MAX_ID_LENGTH) return `[${i}] fields must be at most ${MAX_ID_LENGTH} characters`;
        }
      }
      return undefined;
    }
  }
}

/** Per type: its required field names and every field it accepts, looked up once per field. */
const COMPILED = new Map(
  Object.entries(EVENT_TYPES).map(([type, spec]) => [
    type,
    {
      required: Object.keys(spec.required),
      kinds: new Map<string, FieldKind>(Object.entries({ ...COMMON_OPTIONAL, ...spec.optional, ...spec.required })),
    },
  ]),
);

/**
 * Checks one event; returns its problems as `[field, reason]` pairs (empty when valid).
 * Unknown fields are refused like unknown Item fields: silently dropping them hides bugs.
 * Runs for every event on the main thread: no allocation on the valid path but the result.
 */
export function checkEvent(event: unknown, vocabulary: EventVocabulary): Array<[field: string, reason: string]> {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return [['', 'must be an object']];
  const fields = event as Record<string, unknown>;
  const type = fields.event_type;
  if (typeof type !== 'string') return [['event_type', 'is required and must be a string']];
  const spec = COMPILED.get(type);
  if (!spec) return [['event_type', `'${type.slice(0, 64)}' is not an event type`]];
  const problems: Array<[string, string]> = [];
  for (let i = 0; i < spec.required.length; i++) {
    const field = spec.required[i]!;
    if (!Object.hasOwn(fields, field)) problems.push([field, `is required for ${type}`]);
  }
  for (const field in fields) {
    if (field === 'event_type') continue;
    const kind = spec.kinds.get(field);
    if (!kind) {
      problems.push([field, `is not a field of ${type}`]);
      continue;
    }
    const value = fields[field];
    const reason = checkValue(kind, value);
    if (reason) {
      problems.push([field, reason]);
      continue;
    }
    if (field === 'channel' && !vocabulary.channels.has(value as string)) {
      problems.push([field, `'${value as string}' is not a channel of this environment`]);
    } else if (field === 'page_type' && !vocabulary.pageTypes.has(value as string)) {
      problems.push([field, `'${value as string}' is not a page type of this environment`]);
    } else if (field === 'list_name' && !vocabulary.listNames.has(value as string)) {
      problems.push([field, `'${value as string}' is not a list of this environment`]);
    }
  }
  return problems;
}
