/**
 * @module http/routes/events
 * POST /{environment}/events (SPEC.md "Events"): no token needed and an Authorization header is
 * ignored; a batch is validated whole and stored whole, or rejected whole with one error entry
 * per failing event. GET /{environment}/events shows an environment's most recent events to an
 * authenticated integrator.
 */
import type { Config } from '../../config/types.ts';
import {
  EVENT_CHANNELS,
  STANDARD_PAGE_TYPES,
  checkEvent,
  type EventVocabulary,
  type TrackedEvent,
} from '../../domain/event.ts';
import { E, type FieldError } from '../../domain/errors.ts';
import { pointer } from '../../domain/field-errors.ts';
import type { ServiceMetrics } from '../../metrics/service-metrics.ts';
import { consumedEntries, type Notice } from '../../serving/notices.ts';
import type { EventLog } from '../../store/event-log.ts';
import { authorize, type Authorizer } from '../auth.ts';
import { parseBodyText } from '../read-body.ts';
import { isProtobuf, type ProtobufCodec } from '../protobuf.ts';
import { sendEmpty, sendJson, type StatusMap } from '../respond.ts';
import type { HttpServer } from '../server.ts';

/** SPEC.md: 200 accepted; 400 wrong format or missing information; 415 not JSON; 500. */
const STATUS_TRACK: StatusMap = { invalidEvents: 400, invalidRequest: 400, bodyNotJson: 415, bodyTooLarge: 413 };
const STATUS_RECENT: StatusMap = { invalidRequest: 400, unauthorized: 401 };

export const MAX_EVENTS_PER_REQUEST = 1000;
const MAX_ERRORS_IN_TITLE = 3;
/** Reasons listed per failing event: a hostile event with thousands of bad fields gets a bounded answer. */
const MAX_REASONS_PER_EVENT = 10;
const MAX_FIELD_NAME_SHOWN = 64;

function describe(problems: ReadonlyArray<[string, string]>): string {
  const shown = problems
    .slice(0, MAX_REASONS_PER_EVENT)
    .map(([field, reason]) => (field ? `${field.slice(0, MAX_FIELD_NAME_SHOWN)} ${reason}` : reason));
  if (problems.length > MAX_REASONS_PER_EVENT) shown.push(`and ${problems.length - MAX_REASONS_PER_EVENT} more problems`);
  return shown.join('; ');
}

export interface EventRoutesDeps {
  eventLog: EventLog;
  auth: Authorizer;
  environments: Config['environments'];
  /** Tells the ranking workers (RankingPool.notify). */
  notifyRanking(notice: Notice): void;
  metrics: ServiceMetrics;
  protobuf: ProtobufCodec;
}

function vocabularies(environments: Config['environments']): Map<string, EventVocabulary> {
  const out = new Map<string, EventVocabulary>();
  for (const [name, env] of Object.entries(environments)) {
    out.set(name, {
      pageTypes: new Set([...STANDARD_PAGE_TYPES, ...env.pageTypes]),
      channels: new Set([...EVENT_CHANNELS, ...env.channels]),
      listNames: new Set(Object.keys(env.lists)),
    });
  }
  return out;
}

/** The batch's shape, whichever wire format it came in. */
function checkBatch(parsed: unknown): unknown[] {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw E.invalidRequest('The body must be an object with an `events` array', [{ path: '', message: 'must be an object' }]);
  }
  const events = (parsed as { events?: unknown }).events;
  if (!Array.isArray(events)) {
    throw E.invalidRequest('`events` must be an array of events', [{ path: '/events', message: 'is required and must be an array' }]);
  }
  if (events.length === 0) {
    throw E.invalidRequest('`events` must hold at least one event', [{ path: '/events', message: 'must not be empty' }]);
  }
  if (events.length > MAX_EVENTS_PER_REQUEST) {
    throw E.invalidRequest(`At most ${MAX_EVENTS_PER_REQUEST} events per request`, [
      { path: '/events', message: `must hold at most ${MAX_EVENTS_PER_REQUEST} events` },
    ]);
  }
  const unknownKeys = Object.keys(parsed).filter((k) => k !== 'events');
  if (unknownKeys.length > 0) {
    throw E.invalidRequest(`Unknown field(s): ${unknownKeys.join(', ')}`, unknownKeys.map((k) => ({ path: pointer(k), message: 'is not a field of the request' })));
  }
  return events;
}

export function registerEventRoutes(server: HttpServer, deps: EventRoutesDeps): void {
  const vocabulary = vocabularies(deps.environments);

  server.route('post', '/api/:environment/events', { status: STATUS_TRACK, readsBody: true }, async (ex, req, body) => {
    const environment = req.params[0] ?? '';
    const words = vocabulary.get(environment);
    if (!words) throw E.environmentNotFound(environment);
    const binary = isProtobuf(req.contentType);
    const events = binary ? checkBatch(deps.protobuf.decodeEvents(body)) : checkBatch(parseBodyText(body));
    const errors: FieldError[] = [];
    for (let i = 0; i < events.length; i++) {
      const problems = checkEvent(events[i], words);
      if (problems.length === 0) continue;
      errors.push({
        index: i,
        // One entry per failing event (DESIGN.md): the path names its first failing field.
        path: problems[0]![0] ? pointer('events', i, problems[0]![0].slice(0, MAX_FIELD_NAME_SHOWN)) : pointer('events', i),
        message: describe(problems),
      });
    }
    if (errors.length > 0) {
      deps.metrics.countEvents(environment, 'rejected', events);
      const shown = errors.slice(0, MAX_ERRORS_IN_TITLE).map((e) => `events[${e.index}]: ${e.message}`);
      if (errors.length > MAX_ERRORS_IN_TITLE) shown.push(`and ${errors.length - MAX_ERRORS_IN_TITLE} more`);
      throw E.invalidEvents(shown.join('; '), errors);
    }
    await deps.eventLog.append(environment, events as TrackedEvent[]);
    // After the commit: a ranking worker that applies the notice reads this batch's commit too.
    const entries = consumedEntries(events as TrackedEvent[], deps.environments[environment]!.model.eventWeights);
    if (entries.length > 0) deps.notifyRanking({ kind: 'consumed', environment, entries });
    deps.metrics.countEvents(environment, 'accepted', events);
    sendEmpty(ex, 200);
  });

  server.route('get', '/api/:environment/events', { status: STATUS_RECENT }, async (ex, req) => {
    const environment = req.params[0] ?? '';
    await authorize(deps.auth, req.authorization, environment);
    if (!vocabulary.has(environment)) throw E.environmentNotFound(environment);
    const raw = new URLSearchParams(req.query).get('limit');
    const limit = raw === null ? 50 : /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
    if (!(limit >= 1 && limit <= 1000)) {
      throw E.invalidRequest('limit must be an integer from 1 to 1000', [{ path: 'limit', message: 'must be an integer from 1 to 1000' }]);
    }
    const events = deps.eventLog.recent(environment, limit).map((s) => ({ ...s.e, accepted_at: new Date(s.t).toISOString() }));
    sendJson(ex, 200, { events });
  });
}
