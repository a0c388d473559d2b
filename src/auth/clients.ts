/**
 * @module auth/clients
 * OAuth clients: creation with a random secret shown once, listing, revocation, and secret
 * checks. Secrets are stored only as scrypt hashes with a per-client salt.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Store } from '../store/open.ts';

export interface ClientRecord {
  clientId: string;
  environments: string[];
  /** `scrypt$N$r$p$<salt b64url>$<hash b64url>` */
  secretHash: string;
  createdAt: string;
  revokedAt?: string;
}

const SCRYPT = { N: 16384, r: 8, p: 1, keyLen: 32 };

function derive(secret: string, salt: Buffer, opts: ScryptOptions & { keyLen: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, opts.keyLen, { N: opts.N, r: opts.r, p: opts.p }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(secret, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(secret, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    keyLen: expected.length,
  });
  return timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;
const dummyHash = () => (dummy ??= hashSecret(randomBytes(32).toString('base64url')));

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
    secretHash: await hashSecret(clientSecret),
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
  // Unknown and revoked clients cost the same scrypt as known ones: the time tells nothing.
  const matches = await secretMatches(clientSecret, record?.secretHash ?? (await dummyHash()));
  return matches && record && !record.revokedAt ? record : undefined;
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
