/**
 * @module http/auth
 * Bearer-token check for the items and recommendations routes: the token must verify, its
 * client must still be active, and it must grant the environment named in the path (DESIGN.md
 * invariant 3). Every failure is a 401.
 */
import { isClientActive } from '../auth/clients.ts';
import type { Grant, TokenVerifier } from '../auth/tokens.ts';
import { E } from '../domain/errors.ts';
import type { Store } from '../store/open.ts';

export interface Authorizer {
  verifier: TokenVerifier;
  store: Store;
}

/**
 * Throws E.unauthorized unless `authorization` carries a token valid for `environment`: at once
 * for a token verified before (undefined is returned: nothing to wait for), else through the
 * returned promise.
 */
export function authorize(auth: Authorizer, authorization: string, environment: string): Promise<void> | undefined {
  if (authorization === '') throw E.unauthorized('The Authorization header with a Bearer token is missing');
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/=-]+)$/i.exec(authorization);
  if (!match) throw E.unauthorized('The Authorization header must be "Bearer <access token>"');
  const token = match[1]!;
  const grant = auth.verifier.cachedGrant(token);
  if (grant) {
    checkGrant(auth, grant, environment);
    return undefined;
  }
  return auth.verifier.verify(token).then((verified) => checkGrant(auth, verified, environment));
}

function checkGrant(auth: Authorizer, grant: Grant, environment: string): void {
  if (grant.clientId !== undefined && !isClientActive(auth.store, grant.clientId)) {
    throw E.unauthorized('The client of this access token has been revoked');
  }
  if (!grant.environments.has(environment)) {
    throw E.unauthorized(`The access token is not valid for environment '${environment}'`);
  }
}
