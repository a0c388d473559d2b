/**
 * @module http/routes/oauth
 * The OAuth 2.0 client-credentials token endpoint (RFC 6749 §4.4) and the JWKS that publishes
 * the public half of the signing key. Errors here use RFC 6749 §5.2 bodies, which OAuth client
 * libraries parse, rather than problem details. Every request first takes a token from its source
 * address's bucket, and one naming a client id from that id's bucket (and must find it not locked
 * out), before any secret is checked (auth/attempt-limiter.ts): 429 with Retry-After otherwise.
 */
import type { AttemptLimiter, Refusal } from '../../auth/attempt-limiter.ts';
import { authenticateClient } from '../../auth/clients.ts';
import type { SigningKey } from '../../auth/signing-key.ts';
import { issueAccessToken } from '../../auth/tokens.ts';
import type { AuthConfig } from '../../config/types.ts';
import type { Store } from '../../store/open.ts';
import { sendJson, sendOAuthError, type StatusMap } from '../respond.ts';
import type { HttpServer } from '../server.ts';

/** Only transport errors (413) reach respond.ts's problem path; OAuth errors are written here. */
const STATUS_TOKEN: StatusMap = {};

export interface OAuthRoutesDeps {
  store: Store;
  key: SigningKey;
  config: AuthConfig;
  limiter: AttemptLimiter;
}

function tooMany(ex: Parameters<typeof sendOAuthError>[0], refusal: Refusal): void {
  const description =
    refusal.reason === 'locked_out'
      ? 'This client is locked after repeated failed authentications; retry later'
      : 'Too many token requests; retry later';
  sendOAuthError(ex, 429, 'temporarily_unavailable', description, { 'Retry-After': String(refusal.retryAfterSec) });
}

interface TokenRequest {
  grantType?: string;
  scope?: string;
  clientId?: string;
  clientSecret?: string;
}

function parseTokenRequest(contentType: string, body: Buffer): TokenRequest | undefined {
  let fields: Record<string, unknown>;
  if (/^application\/json\b/i.test(contentType)) {
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
      fields = parsed as Record<string, unknown>;
    } catch {
      return undefined;
    }
  } else {
    fields = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    grantType: str(fields.grant_type),
    scope: str(fields.scope),
    clientId: str(fields.client_id),
    clientSecret: str(fields.client_secret),
  };
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before base64. */
function parseBasic(authorization: string): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic[ ]+([A-Za-z0-9+/=]+)$/i.exec(authorization);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')),
    };
  } catch {
    return undefined;
  }
}

/** Longest client id looked up: generated ids are `ac_` and 24 hex digits. */
const MAX_CLIENT_ID_LENGTH = 256;

export function registerOAuthRoutes(server: HttpServer, deps: OAuthRoutesDeps): void {
  const challenge = { 'WWW-Authenticate': 'Basic realm="affinity"' };

  server.route('post', '/api/oauth/token', { status: STATUS_TOKEN, readsBody: true }, async (ex, req, body) => {
    // The TCP peer's address (a proxy in front is not looked through: SECURITY.md). Read here,
    // not for every request: only this route needs it.
    const byAddress = deps.limiter.admitAddress(Buffer.from(ex.res.getRemoteAddressAsText()).toString());
    if (byAddress) return tooMany(ex, byAddress);
    const form = parseTokenRequest(req.contentType, body ?? Buffer.alloc(0));
    if (!form) return sendOAuthError(ex, 400, 'invalid_request', 'The request body is not a form or JSON object');
    const basic = req.authorization ? parseBasic(req.authorization) : undefined;
    if (req.authorization && !basic) {
      return sendOAuthError(ex, 401, 'invalid_client', 'The Authorization header must be HTTP Basic', challenge);
    }
    if (basic && (form.clientId !== undefined || form.clientSecret !== undefined)) {
      return sendOAuthError(ex, 400, 'invalid_request', 'Use one client authentication method, not two');
    }
    if (!form.grantType) return sendOAuthError(ex, 400, 'invalid_request', 'grant_type is required');
    if (form.grantType !== 'client_credentials') {
      return sendOAuthError(ex, 400, 'unsupported_grant_type', 'Only client_credentials is supported');
    }
    const credentials = basic ?? { clientId: form.clientId, clientSecret: form.clientSecret };
    if (!credentials.clientId || !credentials.clientSecret) {
      return sendOAuthError(ex, 401, 'invalid_client', 'Client authentication is missing', challenge);
    }
    // No client has a longer id (they are generated); a longer one is not looked up (LMDB keys
    // stop at 1,978 bytes: the lookup threw, a 500 the fuzz test found) nor counted by the limiter.
    if (credentials.clientId.length > MAX_CLIENT_ID_LENGTH) {
      return sendOAuthError(ex, 401, 'invalid_client', 'Client authentication failed', challenge);
    }
    const byClient = deps.limiter.admitClient(credentials.clientId);
    if (byClient) return tooMany(ex, byClient);
    const client = await authenticateClient(deps.store, credentials.clientId, credentials.clientSecret);
    if (!client) {
      deps.limiter.recordFailure(credentials.clientId);
      return sendOAuthError(ex, 401, 'invalid_client', 'Client authentication failed', challenge);
    }
    deps.limiter.recordSuccess(client.clientId);

    let environments = client.environments;
    if (form.scope !== undefined && form.scope.trim() !== '') {
      const requested = [...new Set(form.scope.trim().split(/ +/))];
      const outside = requested.filter((e) => !client.environments.includes(e));
      if (outside.length > 0) {
        return sendOAuthError(ex, 400, 'invalid_scope', `The client may not use environment(s): ${outside.join(', ')}`);
      }
      environments = requested;
    }
    const accessToken = await issueAccessToken(deps.key, deps.config, client.clientId, environments);
    sendJson(
      ex,
      200,
      { access_token: accessToken, token_type: 'Bearer', expires_in: deps.config.tokenTtlSec, scope: environments.join(' ') },
      { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
    );
  });

  server.route('get', '/.well-known/jwks.json', { status: {} }, (ex) => {
    sendJson(ex, 200, { keys: [deps.key.publicJwk] }, { 'Cache-Control': 'public, max-age=300' });
  });
}
