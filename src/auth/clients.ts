/**
 * @module auth/clients
 * OAuth clients: creation with a random secret shown once, listing, revocation, and secret
 * checks. Secrets are generated here with 256 bits of entropy, so a fast keyed hash (HMAC-SHA-256
 * with a per-client salt) is as strong as a slow one: nobody can enumerate 2^256 candidates, and
 * a slow hash would only hand an attacker a cheap way to burn CPU (the audit measured 16 MiB of
 * scrypt per guess). Hashes stored by earlier versions (scrypt) still verify, and are replaced by
 * the fast form on the client's next successful authentication.
 */
import { createHmac, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Store } from '../store/open.ts';

export interface ClientRecord {
  clientId: string;
  environments: string[];
  /** `hmac-sha256$<salt b64url>$<hash b64url>`, or from earlier versions `scrypt$N$r$p$<salt>$<hash>` */
  secretHash: string;
  createdAt: string;
  revokedAt?: string;
}

const HMAC_SCHEME = 'hmac-sha256';

function hmac(secret: string, salt: Buffer): Buffer {
  return createHmac('sha256', salt).update(secret, 'utf8').digest();
}

/** Verifies hashes written before secrets got the fast hash; never used to write one. */
function deriveScrypt(secret: string, salt: Buffer, opts: ScryptOptions & { keyLen: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, opts.keyLen, { N: opts.N, r: opts.r, p: opts.p }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** The stored form of a generated secret (see the module header for why a fast hash). */
function hashSecret(secret: string): string {
  const salt = randomBytes(16);
  return [HMAC_SCHEME, salt.toString('base64url'), hmac(secret, salt).toString('base64url')].join('$');
}

/** Whether `secret` matches the stored hash, in either scheme; false for anything unreadable. */
async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts[0] === HMAC_SCHEME && parts.length === 3) {
    const expected = Buffer.from(parts[2]!, 'base64url');
    const actual = hmac(secret, Buffer.from(parts[1]!, 'base64url'));
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }
  const [scheme, n, r, p, salt, hash] = parts;
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await deriveScrypt(secret, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    keyLen: expected.length,
  });
  return timingSafeEqual(actual, expected);
}

/** Unknown clients are checked against this, so they cost what a known client costs. */
const DUMMY_HASH = hashSecret(randomBytes(32).toString('base64url'));

/** Creates a client for the given environments; the secret is returned here and never again. */
export async function createClient(
  store: Store,
  environments: string[],
): Promise<{ clientId: string; clientSecret: string }> {
  const clientId = `ac_${randomBytes(12).toString('hex')}`;
  const clientSecret = randomBytes(32).toString('base64url');
  const record: ClientRecord = {
    clientId,
    environments,
    secretHash: hashSecret(clientSecret),
    createdAt: new Date().toISOString(),
  };
  await store.clients.put(clientId, record);
  return { clientId, clientSecret };
}

/** Every client, revoked ones included, without their secret hashes. */
export function listClients(store: Store): Array<Omit<ClientRecord, 'secretHash'>> {
  const out: Array<Omit<ClientRecord, 'secretHash'>> = [];
  for (const { value } of store.clients.getRange()) {
    const { secretHash: _hash, ...rest } = value as ClientRecord;
    out.push(rest);
  }
  return out;
}

/** Marks a client revoked; its tokens stop working at once. Resolves false when unknown. */
export function revokeClient(store: Store, clientId: string): Promise<boolean> {
  return store.clients.transaction(() => {
    const record = store.clients.get(clientId) as ClientRecord | undefined;
    if (!record) return false;
    if (!record.revokedAt) {
      store.clients.put(clientId, { ...record, revokedAt: new Date().toISOString() });
      store.meta.put(REVOCATIONS_KEY, (store.meta.get(REVOCATIONS_KEY) ?? 0) + 1);
    }
    return true;
  });
}

/** The active client whose secret matches, or undefined. */
export async function authenticateClient(
  store: Store,
  clientId: string,
  clientSecret: string,
): Promise<ClientRecord | undefined> {
  const record = store.clients.get(clientId) as ClientRecord | undefined;
  // Unknown and revoked clients cost the same hash as known ones: the time tells nothing.
  const matches = await secretMatches(clientSecret, record?.secretHash ?? DUMMY_HASH);
  if (!matches || !record || record.revokedAt) return undefined;
  if (!record.secretHash.startsWith(`${HMAC_SCHEME}$`)) await migrateHash(store, clientId, clientSecret);
  return record;
}

/** Replaces a verified scrypt hash with the fast form, unless the record changed meanwhile. */
async function migrateHash(store: Store, clientId: string, clientSecret: string): Promise<void> {
  await store.clients.transaction(() => {
    const current = store.clients.get(clientId) as ClientRecord | undefined;
    if (!current || current.secretHash.startsWith(`${HMAC_SCHEME}$`)) return;
    store.clients.put(clientId, { ...current, secretHash: hashSecret(clientSecret) });
  });
}

/** Counts revocations (meta): a change tells every process that a client it trusts may be revoked. */
const REVOCATIONS_KEY = 'clientRevocations';
/** Clients known active, per store, valid while the revocation count stays what it was. */
const activeClients = new WeakMap<Store, { revocations: number; active: Set<string> }>();
const MAX_CACHED_CLIENTS = 10_000;

/**
 * True when the client exists and is not revoked. Checked per request: one counter read, and the
 * client's record (a msgpack decode, ~8 µs on the recommendation path) only when a revocation
 * happened since it was last read (by this process or, through LMDB, by the CLI).
 */
export function isClientActive(store: Store, clientId: string): boolean {
  const revocations = store.meta.get(REVOCATIONS_KEY) ?? 0;
  let cache = activeClients.get(store);
  if (!cache || cache.revocations !== revocations) activeClients.set(store, (cache = { revocations, active: new Set() }));
  if (cache.active.has(clientId)) return true;
  const record = store.clients.get(clientId) as ClientRecord | undefined;
  const active = record !== undefined && !record.revokedAt;
  // Only "active" is kept: an unknown client may be created later, a revoked one stays revoked.
  if (active && cache.active.size < MAX_CACHED_CLIENTS) cache.active.add(clientId);
  return active;
}

export function hasClients(store: Store): boolean {
  return store.clients.getKeysCount({ limit: 1 }) > 0;
}
