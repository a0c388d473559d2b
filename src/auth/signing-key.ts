/**
 * @module auth/signing-key
 * The service's token signing key: generated on first start, kept as a private JWK in the data
 * directory (mode 0600), reused afterwards so issued tokens stay valid across restarts.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

export const SIGNING_ALG = 'ES256';

export interface SigningKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  kid: string;
}

async function fromPrivateJwk(jwk: JWK): Promise<SigningKey> {
  const { d: _private, ...publicJwk } = jwk;
  const kid = jwk.kid ?? (await calculateJwkThumbprint(publicJwk));
  const privateKey = (await importJWK(jwk, SIGNING_ALG)) as CryptoKey;
  return { privateKey, publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' }, kid };
}

/** Reads the key from `<dataDir>/keys/`, creating it on first use. */
export async function loadOrCreateSigningKey(dataDir: string): Promise<SigningKey> {
  const dir = join(dataDir, 'keys');
  const file = join(dir, 'token-signing-key.json');
  try {
    return await fromPrivateJwk(JSON.parse(readFileSync(file, 'utf8')) as JWK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const { d: _private, ...publicJwk } = jwk;
  jwk.kid = await calculateJwkThumbprint(publicJwk);
  try {
    // 'wx': if another process created the key meanwhile, use theirs.
    writeFileSync(file, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return fromPrivateJwk(JSON.parse(readFileSync(file, 'utf8')) as JWK);
  }
  return fromPrivateJwk(jwk);
}
