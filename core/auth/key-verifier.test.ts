import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization, ensureDefaultPlans } from '../billing/index.js';
import { startTcpProxy, hostAndPort } from '../../test/support/tcp-proxy.js';
import { createDb, type Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { createLogger } from '../logging/index.js';
import { generateApiKey } from './api-key-format.js';
import { createKeyVerifier, type KeyVerifier, type KeyVerifierOptions } from './key-verifier.js';
import { createApiKey, revokeApiKey } from './manage-api-keys.js';

const databaseUrl = inject('databaseUrl');
const logger = createLogger({ level: 'silent' });
let db: Db;
let organizationId: string;
const opened: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 4 });
  await ensureDefaultPlans(db);
  organizationId = (await createOrganization(db, { name: 'key verifier test', planId: 'standard' })).id;
});
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});
afterAll(() => db.destroy());

/** A verifier with its own pool and LISTEN connection: another process, as far as Postgres knows. */
function verifier(overrides: Partial<KeyVerifierOptions> = {}, connectionString = databaseUrl): KeyVerifier {
  const ownDb = createDb({ connectionString, poolMax: 2 });
  const v = createKeyVerifier({ db: ownDb, logger, ttlMs: 60_000, listenConnectionString: connectionString, ...overrides });
  opened.push({ close: () => ownDb.destroy() }, v);
  return v;
}

const bearer = (key: string) => `Bearer ${key}`;
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}
const newKey = (extra: Partial<Parameters<typeof createApiKey>[1]> = {}) => createApiKey(db, { organizationId, name: 'test', ...extra });

describe('key verification', () => {
  it('when a valid organization key is sent then its principal is returned', async () => {
    const { key, record } = await newKey({ mode: 'test' });
    const principal = await verifier().verify(bearer(key));
    expect(principal).toEqual({ organizationId, keyId: record.id, keyKind: 'organization', mode: 'test' });
  });

  it('when there is no Authorization header then missing_api_key', async () => {
    expect(await codeOf(verifier().verify(undefined))).toBe('missing_api_key');
  });

  it('when the header is Basic then missing_api_key', async () => {
    expect(await codeOf(verifier().verify('Basic dXNlcjpwYXNz'))).toBe('missing_api_key');
  });

  it('when the token is not sk_-shaped then invalid_api_key', async () => {
    expect(await codeOf(verifier().verify('Bearer hello'))).toBe('invalid_api_key');
  });

  it('when the key is unknown then invalid_api_key', async () => {
    expect(await codeOf(verifier().verify(bearer(generateApiKey('live'))))).toBe('invalid_api_key');
  });

  it('when the key is revoked then invalid_api_key', async () => {
    const { key, record } = await newKey();
    await revokeApiKey(db, record.id, 'test');
    expect(await codeOf(verifier().verify(bearer(key)))).toBe('invalid_api_key');
  });

  it('when a cached key passes its expiry then it is refused without asking Postgres', async () => {
    const { key } = await newKey({ expiresAt: new Date(Date.now() + 1_000) });
    const v = verifier();
    expect(await codeOf(v.verify(bearer(key)))).toBe('ok');
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await codeOf(v.verify(bearer(key)))).toBe('invalid_api_key');
  });

  it('when the key already expired then invalid_api_key', async () => {
    const { key, record } = await newKey();
    await db('api_keys').where({ id: record.id }).update({ expires_at: new Date(Date.now() - 1_000) });
    expect(await codeOf(verifier().verify(bearer(key)))).toBe('invalid_api_key');
  });

  it('when the key is personal then invalid_api_key', async () => {
    const { key } = await newKey({ kind: 'personal' });
    expect(await codeOf(verifier().verify(bearer(key)))).toBe('invalid_api_key');
  });

  it('when a key is revoked then a second process refuses it within 1 s', async () => {
    const { key, record } = await newKey();
    const first = verifier();
    const second = verifier();
    await Promise.all([first.ready(), second.ready()]);
    await first.verify(bearer(key));
    await second.verify(bearer(key)); // cached in both for 60 s: only the notification can undo it
    const revokedAt = Date.now();
    await revokeApiKey(db, record.id, 'test');
    let seenAfter = -1;
    while (Date.now() - revokedAt < 1_000) {
      if ((await codeOf(second.verify(bearer(key)))) === 'invalid_api_key') {
        seenAfter = Date.now() - revokedAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(seenAfter).toBeGreaterThanOrEqual(0);
    expect(seenAfter).toBeLessThan(1_000);
    expect(await codeOf(first.verify(bearer(key)))).toBe('invalid_api_key');
  });

  it('when Postgres becomes unreachable then a verified key keeps working past its TTL and an unknown key gets auth_unavailable', async () => {
    const proxy = await startTcpProxy(hostAndPort(databaseUrl));
    opened.push(proxy);
    const { key } = await newKey();
    const { key: neverSeen } = await newKey();
    const v = verifier({ ttlMs: 200, lookupTimeoutMs: 500 }, proxy.urlFor(databaseUrl));
    await v.ready();
    expect(await codeOf(v.verify(bearer(key)))).toBe('ok');

    proxy.cut(); // Postgres is now unreachable for this verifier (pool and listener)
    await new Promise((r) => setTimeout(r, 300)); // past the TTL
    expect(await codeOf(v.verify(bearer(key)))).toBe('ok');
    expect(await codeOf(v.verify(bearer(neverSeen)))).toBe('auth_unavailable');
    const started = Date.now();
    expect(await codeOf(v.verify(bearer(key)))).toBe('ok');
    expect(Date.now() - started).toBeLessThan(100); // served from cache, not after a timeout

    proxy.restore();
    await v.ready(); // the listener reconnects by itself
    await expect.poll(() => codeOf(v.verify(bearer(neverSeen))), { timeout: 5_000 }).toBe('ok');
  });

  it('when more unknown keys are sent than it remembers then keys verified before stay cached: they keep working when Postgres becomes unreachable', async () => {
    const proxy = await startTcpProxy(hostAndPort(databaseUrl));
    opened.push(proxy);
    const verified = await Promise.all(Array.from({ length: 5 }, () => newKey()));
    const { key: neverSeen } = await newKey();
    // Room for 20 verified keys and 50 unknown ones: the flood is six times that.
    const v = verifier({ maxCachedKeys: 20, maxCachedUnknownKeys: 50 }, proxy.urlFor(databaseUrl));
    await v.ready();
    for (const { key } of verified) expect(await codeOf(v.verify(bearer(key)))).toBe('ok');
    for (let sent = 0; sent < 300; sent += 30) {
      const codes = await Promise.all(Array.from({ length: 30 }, () => codeOf(v.verify(bearer(generateApiKey('live'))))));
      expect(new Set(codes)).toEqual(new Set(['invalid_api_key']));
    }

    proxy.cut();
    for (const { key } of verified) expect(await codeOf(v.verify(bearer(key)))).toBe('ok');
    expect(await codeOf(v.verify(bearer(neverSeen)))).toBe('auth_unavailable');
    expect(await codeOf(v.verify(bearer(generateApiKey('live'))))).toBe('auth_unavailable');
  });

  it('when Postgres becomes unreachable while unknown keys wait their turn then each is answered auth_unavailable, and verified keys keep working', async () => {
    const proxy = await startTcpProxy(hostAndPort(databaseUrl));
    const { key } = await newKey();
    const warnings: string[] = [];
    const v = verifier(
      { lookupTimeoutMs: 500, concurrentUnknownKeyLookups: 1, logger: createLogger({ level: 'warn', write: (line) => warnings.push(JSON.parse(line).msg) }) },
      proxy.urlFor(databaseUrl),
    );
    opened.push(proxy); // closed first: the verifier's frozen connections end with it
    await v.ready();
    expect(await codeOf(v.verify(bearer(key)))).toBe('ok');
    proxy.freeze(); // no answer, no error: the lookup in progress runs to its deadline
    const waiting = Array.from({ length: 50 }, () => codeOf(v.verify(bearer(generateApiKey('live')))));
    expect(await codeOf(v.verify(bearer(key)))).toBe('ok');
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(['auth_unavailable']));
    expect(await codeOf(v.verify(bearer(key)))).toBe('ok');
    // Those waiting were told when their turn came, as the store was found down: none asked it
    // in turn, each to its deadline, until the rest had waited too long.
    expect(warnings).toEqual(['key store unavailable: unknown keys get auth_unavailable, cached keys keep working']);
  });

  it('when keys are used then last_used_at is written in one batch, not per request', async () => {
    const { key, record } = await newKey();
    const v = verifier({ lastUsedFlushMs: 60_000 });
    for (let i = 0; i < 20; i++) await v.verify(bearer(key));
    expect((await db('api_keys').where({ id: record.id }).first('last_used_at')).last_used_at).toBeNull();
    await v.close(); // flushes
    expect((await db('api_keys').where({ id: record.id }).first('last_used_at')).last_used_at).toBeInstanceOf(Date);
  });

  it('when a key is revoked after its last call and before the flush then last_used_at is the call\'s time, before the revocation', async () => {
    const { key, record } = await newKey();
    const v = verifier({ lastUsedFlushMs: 60_000 });
    const before = Date.now();
    await v.verify(bearer(key));
    const after = Date.now();
    await new Promise((r) => setTimeout(r, 300));
    await revokeApiKey(db, record.id, 'test');
    await v.close(); // flushes
    const row = await db('api_keys').where({ id: record.id }).first<{ last_used_at: Date; revoked_at: Date }>('last_used_at', 'revoked_at');
    expect(row.last_used_at.getTime()).toBeGreaterThanOrEqual(before - 5);
    expect(row.last_used_at.getTime()).toBeLessThanOrEqual(after + 5);
    expect(row.last_used_at.getTime()).toBeLessThan(row.revoked_at.getTime());
  });
});
