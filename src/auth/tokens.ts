/**
 * @module auth/tokens
 * Issues the service's access tokens (ES256 JWTs carrying the environments a client may use)
 * and verifies bearer tokens: the service's own, and optionally an external identity provider's.
 * Verified tokens are cached until they expire so the hot path skips signature checks; a cache
 * entry never outlives its token's `exp`, and revocation is checked on every request.
 */
import {
  SignJWT,
  createLocalJWKSet,
  customFetch,
  createRemoteJWKSet,
  decodeProtectedHeader,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import type { AuthConfig } from '../config/types.ts';
import { parseAllowList } from '../outbound/allow-list.ts';
import { guardedFetch } from '../outbound/guard.ts';
import { AppError, E } from '../domain/errors.ts';
import { SIGNING_ALG, type SigningKey } from './signing-key.ts';

export const AUDIENCE = 'affinity-api';
const ENVIRONMENTS_CLAIM = 'environments';
/** How long a token refused by the service's own key is answered from memory. */
const REJECTION_TTL_MS = 60_000;
/**
 * Clock difference tolerated between this host and a token's issuer: a token issued further in
 * the future, or (the service's own) expiring later than its lifetime from now plus this, is
 * refused; such a token was not made by this service's issuing code.
 */
const CLOCK_SKEW_SEC = 60;
/** Asymmetric algorithms only: `none` and HMAC (key-confusion) tokens are refused outright. */
const EXTERNAL_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** What a verified token allows. */
export interface Grant {
  /** Client id for the service's own tokens; undefined for external ones (no revocation list). */
  clientId?: string;
  environments: ReadonlySet<string>;
  /** Unix seconds. */
  exp: number;
}

export async function issueAccessToken(
  key: SigningKey,
  config: AuthConfig,
  clientId: string,
  environments: string[],
): Promise<string> {
  return new SignJWT({ [ENVIRONMENTS_CLAIM]: environments })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(config.issuer)
    .setAudience(AUDIENCE)
    .setSubject(clientId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + config.tokenTtlSec)
    .sign(key.privateKey);
}

function environmentsOf(payload: JWTPayload, claim: string): Set<string> {
  const value = payload[claim];
  if (Array.isArray(value)) return new Set(value.filter((v): v is string => typeof v === 'string'));
  if (typeof value === 'string') return new Set(value.split(' ').filter(Boolean));
  return new Set();
}

/** The external provider's JWKS, fetched through the outbound guard like every outbound request. */
function remoteKeys(jwksUrl: string, allowEntries: readonly string[]): JWTVerifyGetKey {
  const allow = parseAllowList(allowEntries);
  const fetchThroughGuard = async (url: string, init: { headers: Headers; signal: AbortSignal }) =>
    // undici's Response is the WHATWG one jose reads (status, json()); only the declared types differ.
    (await guardedFetch(url, { headers: Object.fromEntries(init.headers), signal: init.signal }, allow)) as unknown as Response;
  return createRemoteJWKSet(new URL(jwksUrl), { [customFetch]: fetchThroughGuard });
}

/** Throws E.unauthorized for an `iat` that is not a number or lies beyond the clock skew ahead. */
function checkIssuedAt(payload: JWTPayload): void {
  if (payload.iat === undefined) return;
  if (typeof payload.iat !== 'number' || payload.iat > Date.now() / 1000 + CLOCK_SKEW_SEC) {
    throw E.unauthorized('The access token is issued in the future');
  }
}

export class TokenVerifier {
  readonly #config: AuthConfig;
  readonly #ownKeys: JWTVerifyGetKey;
  readonly #externalKeys: JWTVerifyGetKey | undefined;
  // Two generations, the older dropped whole when the newer is full: bounded memory under token
  // churn without evicting one by one from a Map's front (V8 walks the holes deletions leave).
  #cache = new Map<string, Grant>();
  #olderCache = new Map<string, Grant>();
  /**
   * Tokens refused by the service's own key (malformed, badly signed, expired, wrong audience),
   * with their error, for REJECTION_TTL_MS: a client repeating a bad token must not cost a
   * signature check per request. Same two generations. External tokens are not remembered: their
   * refusal may come from a JWKS endpoint that is only briefly unreachable.
   */
  #rejected = new Map<string, { error: AppError; until: number }>();
  #olderRejected = new Map<string, { error: AppError; until: number }>();

  constructor(key: SigningKey, config: AuthConfig) {
    this.#config = config;
    this.#ownKeys = createLocalJWKSet({ keys: [key.publicJwk] });
    this.#externalKeys = config.external ? remoteKeys(config.external.jwksUrl, config.external.outbound?.allow ?? []) : undefined;
  }

  /**
   * The grant of a token verified before and not expired yet, without a promise (the request
   * path's common case); undefined otherwise, and then verify() decides.
   */
  cachedGrant(token: string): Grant | undefined {
    const cached = this.#cache.get(token) ?? this.#olderCache.get(token);
    return cached && cached.exp > Date.now() / 1000 ? cached : undefined;
  }

  /** The grant of a valid token; throws E.unauthorized otherwise. */
  async verify(token: string): Promise<Grant> {
    const nowSec = Date.now() / 1000;
    const cached = this.#cache.get(token) ?? this.#olderCache.get(token);
    if (cached) {
      if (cached.exp > nowSec) return cached;
      throw E.unauthorized('The access token has expired');
    }
    const now = Date.now();
    const rejected = this.#rejected.get(token) ?? this.#olderRejected.get(token);
    if (rejected && rejected.until > now) throw rejected.error;
    let grant: Grant;
    try {
      grant = await this.#verifySignature(token);
    } catch (err) {
      if (err instanceof AppError && this.#config.tokenCacheSize > 0 && !this.#isExternal(token)) {
        if (this.#rejected.size >= Math.ceil(this.#config.tokenCacheSize / 2)) {
          this.#olderRejected = this.#rejected;
          this.#rejected = new Map();
        }
        this.#rejected.set(token, { error: err, until: now + REJECTION_TTL_MS });
      }
      throw err;
    }
    if (this.#config.tokenCacheSize > 0) {
      if (this.#cache.size >= Math.ceil(this.#config.tokenCacheSize / 2)) {
        this.#olderCache = this.#cache;
        this.#cache = new Map();
      }
      this.#cache.set(token, grant);
    }
    return grant;
  }

  /** Whether the token names the external identity provider as its issuer (unverified read). */
  #isExternal(token: string): boolean {
    const external = this.#config.external;
    if (!external) return false;
    try {
      const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as JWTPayload;
      return payload.iss === external.issuer && payload.iss !== this.#config.issuer;
    } catch {
      return false;
    }
  }

  async #verifySignature(token: string): Promise<Grant> {
    let issuer: string | undefined;
    try {
      decodeProtectedHeader(token);
      const parts = token.split('.');
      const payload = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8')) as JWTPayload;
      issuer = typeof payload.iss === 'string' ? payload.iss : undefined;
    } catch {
      throw E.unauthorized('The access token is malformed');
    }
    const external = this.#config.external;
    const useExternal = external !== undefined && issuer === external.issuer && issuer !== this.#config.issuer;
    try {
      if (useExternal) {
        const { payload } = await jwtVerify(token, this.#externalKeys!, {
          issuer: external.issuer,
          audience: external.audience,
          algorithms: EXTERNAL_ALGS,
          requiredClaims: ['exp'],
        });
        checkIssuedAt(payload);
        return { environments: environmentsOf(payload, external.environmentsClaim), exp: payload.exp! };
      }
      const { payload } = await jwtVerify(token, this.#ownKeys, {
        issuer: this.#config.issuer,
        audience: AUDIENCE,
        algorithms: [SIGNING_ALG],
        requiredClaims: ['exp', 'sub', 'iat'],
      });
      checkIssuedAt(payload);
      if (payload.exp! > Date.now() / 1000 + this.#config.tokenTtlSec + CLOCK_SKEW_SEC) {
        throw E.unauthorized(`The access token expires later than the token lifetime of ${this.#config.tokenTtlSec} s allows`);
      }
      return { clientId: payload.sub!, environments: environmentsOf(payload, ENVIRONMENTS_CLAIM), exp: payload.exp! };
    } catch (err) {
      if (err instanceof AppError) throw err;
      const code = (err as { code?: string }).code;
      if (code === 'ERR_JWT_EXPIRED') throw E.unauthorized('The access token has expired');
      if (code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JOSE_GENERIC' || code === 'ERR_JWKS_NO_MATCHING_KEY') {
        throw E.unauthorized('The access token is not signed by a trusted key');
      }
      throw E.unauthorized(`The access token is invalid: ${(err as Error).message}`);
    }
  }
}
