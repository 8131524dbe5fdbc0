import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTcpProxy, hostAndPort } from '../../test/support/tcp-proxy.js';
import { createApiKey } from '../auth/index.js';
import { applyUsageBatch, changeCredits, createOrganization, ensureDefaultPlans, ensurePlan, setCallsCap, setOrganizationLimits, setOrganizationPlan, setProductOverride } from '../billing/index.js';
import { createDb, type Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { newId } from '../ids/index.js';
import { createLogger } from '../logging/index.js';
import { createInMemoryRateLimiter } from '../ratelimit/index.js';
import { createAccessControl, type AccessControlHandle } from './create-access-control.js';

const databaseUrl = inject('databaseUrl');
let db: Db;
let access: AccessControlHandle;
const rateLimiter = createInMemoryRateLimiter();

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 4 });
  await ensureDefaultPlans(db);
  // A long entitlement TTL: whatever changes within a test is seen through notifications only.
  access = createAccessControl({
    db, listenConnectionString: databaseUrl, keyCacheTtlMs: 60_000, entitlementCacheTtlMs: 60_000, rateLimiter, logger: createLogger({ level: 'silent' }),
  });
  await access.ready();
});
afterAll(async () => {
  await access.close();
  await rateLimiter.close();
  await db.destroy();
});

async function organizationWithKey(planId: string | null = 'standard') {
  const org = await createOrganization(db, { name: 'access test', planId });
  const { key } = await createApiKey(db, { organizationId: org.id, name: 'test' });
  const principal = await access.authenticate(`Bearer ${key}`);
  return { organizationId: org.id, principal };
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

/** Polls until the expected outcome, returning how long it took. */
async function seenWithin(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await check()) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`not seen within ${ms} ms`);
}

const setFlags = (organizationId: string, flags: { credits_exhausted?: boolean; limit_reached?: boolean }) =>
  db('allowances').where({ organization_id: organizationId }).update(flags);

const balanceOf = async (organizationId: string) => Number((await db('allowances').where({ organization_id: organizationId }).first('credits_balance')).credits_balance);

/** Leaves the organization `credits` credits, by an adjustment in the ledger. */
const leaveCredits = async (organizationId: string, credits: number) =>
  changeCredits(db, { organizationId, kind: 'adjustment', credits: credits - (await balanceOf(organizationId)), actor: 'test', reason: `leave ${credits} credits` });

describe('access control', () => {
  it('when an entitled organization calls then the grant carries the plan measure and rate-limit status', async () => {
    const { principal } = await organizationWithKey();
    const grant = await access.authorize(principal, 'company-credit-report', 'endpoint');
    expect(grant.measure).toEqual({ quantity: 10, unit: 'credits' });
    expect(grant.rateLimit).toEqual({ limit: 40, remaining: 39, resetSeconds: 1 });
    expect((await access.authorize(principal, 'company-report', 'endpoint')).measure).toEqual({ quantity: 1, unit: 'calls' });
  });

  it('when the organization has no plan then client_not_configured with RateLimit headers', async () => {
    const { principal } = await organizationWithKey(null);
    const err = await refusal(access.authorize(principal, 'company-report', 'endpoint'));
    expect(err.code).toBe('client_not_configured');
    expect(err.status).toBe(403);
    // Provisioning is ours: the message says whom the customer asks.
    expect(err.message).toBe('The organization has no plan yet: the service has not been provisioned for it. Ask your account manager to finish setting it up.');
    expect(err.headers).toMatchObject({ 'RateLimit-Limit': expect.any(String), 'RateLimit-Remaining': expect.any(String), 'RateLimit-Reset': expect.any(String) });
    expect(await access.entitlements(principal, 'endpoint')).toEqual(new Map());
  });

  it('when the product is not in the plan then not_entitled, saying where to see what the key may call', async () => {
    const planId = `test-${newId('p').toLowerCase()}`;
    await ensurePlan(db, {
      id: planId, name: 'reports only', limits: { perSecond: 5, burst: 5, perMinute: 100 }, creditsPerPeriod: 0, callsCapPerPeriod: null,
      products: [{ product: 'company-report', kind: 'endpoint', quantity: 1, unit: 'calls' }],
    });
    const { principal } = await organizationWithKey(planId);
    const endpoint = await refusal(access.authorize(principal, 'company-financials', 'endpoint'));
    expect(endpoint.code).toBe('not_entitled');
    expect(endpoint.message).toBe("This endpoint is not included in the organization's plan. GET /openapi.json with this key lists the endpoints it may call; ask your account manager about a plan that includes this one.");
    const tool = await refusal(access.authorize(principal, 'company-report', 'tool'));
    expect(tool.code).toBe('not_entitled');
    expect(tool.message).toBe("This tool is not included in the organization's plan. tools/list shows the tools this key may call; ask your account manager about a plan that includes this one.");
    expect([...(await access.entitlements(principal, 'endpoint')).keys()]).toEqual(['company-report']);
    expect(await access.entitlements(principal, 'tool')).toEqual(new Map());
  });

  it('when an override changes a measure then the next grant uses it and entitlements list it', async () => {
    const { organizationId, principal } = await organizationWithKey();
    expect((await access.authorize(principal, 'company-financials', 'endpoint')).measure).toEqual({ quantity: 5, unit: 'credits' });
    await setProductOverride(db, organizationId, 'company-financials', { quantity: 2, unit: 'calls' });
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-financials', 'endpoint')).measure.quantity === 2);
    expect((await access.authorize(principal, 'company-financials', 'endpoint')).measure).toEqual({ quantity: 2, unit: 'calls' });
    expect((await access.entitlements(principal, 'endpoint')).get('company-financials')).toEqual({ quantity: 2, unit: 'calls' });
  });

  it('when an override disables a product then not_entitled', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await access.authorize(principal, 'service_analyze_company', 'tool');
    await setProductOverride(db, organizationId, 'service_analyze_company', { enabled: false });
    await seenWithin(1_000, async () => (await refusal(access.authorize(principal, 'service_analyze_company', 'tool')).catch(() => undefined))?.code === 'not_entitled');
  });

  it('when credits are exhausted then only credits-priced products are refused, with 402', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await setFlags(organizationId, { credits_exhausted: true });
    const err = await refusal(access.authorize(principal, 'company-profile', 'endpoint'));
    expect(err.code).toBe('credits_exhausted');
    expect(err.status).toBe(402);
    expect(err.message).toBe("The organization's credit balance cannot cover this call. Your organization cannot add credits itself: ask your account manager for a top-up.");
    expect(err.headers?.['RateLimit-Limit']).toBeDefined();
    expect((await access.authorize(principal, 'company-report', 'endpoint')).measure.unit).toBe('calls');
  });

  it('when the call cap is reached then only calls-priced products are refused, with 429 and Retry-After until the next month', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await setFlags(organizationId, { limit_reached: true });
    const err = await refusal(access.authorize(principal, 'company-report', 'endpoint'));
    expect(err.code).toBe('limit_reached');
    expect(err.status).toBe(429);
    const now = new Date();
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    expect(Math.abs(err.retryAfterSeconds! - (nextMonth - now.getTime()) / 1000)).toBeLessThan(5);
    // The reset as a date too: a model reads that better than two million seconds. Only the
    // service raises a cap: the message says whom to ask.
    expect(err.message).toBe(`The organization reached its call cap for this billing period. It resets at the start of the next month, ${new Date(nextMonth).toISOString().replace('.000Z', 'Z')}; to call before then, ask your account manager to raise the cap.`);
    expect((await access.authorize(principal, 'company-financials', 'endpoint')).measure.unit).toBe('credits');
  });

  it('when the balance covers a cheap call but not a dearer one then the dearer one is refused with 402, and a top-up serves it within 1 s', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await leaveCredits(organizationId, 2);
    // 2 credits still pay a 1-credit search, so the flag stays down.
    expect(await db('allowances').where({ organization_id: organizationId }).first('credits_exhausted')).toEqual({ credits_exhausted: false });
    await seenWithin(1_000, async () => (await refusal(access.authorize(principal, 'company-financials', 'endpoint')).catch(() => undefined))?.code === 'credits_exhausted');
    const err = await refusal(access.authorize(principal, 'company-financials', 'endpoint'));
    expect(err.status).toBe(402);
    // Customers cannot buy credits themselves (only the service's operators add them).
    expect(err.message).toBe("The organization's credit balance cannot cover this call's 5 credits. Your organization cannot add credits itself: ask your account manager for a top-up.");
    expect((await access.authorize(principal, 'service_search_companies', 'tool')).measure).toEqual({ quantity: 1, unit: 'credits' });
    expect((await access.authorize(principal, 'company-report', 'endpoint')).measure.unit).toBe('calls');
    // The entitlement TTL here is a minute: only the top-up's notification can make this pass.
    await changeCredits(db, { organizationId, kind: 'top_up', credits: 3, actor: 'test', reason: 'now 5' });
    const served = await seenWithin(1_000, async () => (await access.authorize(principal, 'company-financials', 'endpoint').then(() => true, () => false)));
    expect(served).toBeLessThan(1_000);
  });

  it('when usage takes the balance below a product\'s price (no flag moving) then that product is refused within 1 s, though the cached state lives a minute', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await leaveCredits(organizationId, 20);
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-profile', 'endpoint').then(() => true, () => false)));
    // Usage of 13 credits through the worker's own path: 20 → 7, below the profile's 8 and the
    // credit report's 10, still above the cheapest (1): no flag moves.
    const event = { v: 1, organizationId, keyId: principal.keyId, source: 'api', product: 'company-financials', quantity: 13, unit: 'credits', occurredAt: new Date().toISOString() };
    await db.transaction((trx) => applyUsageBatch(trx, [{ value: Buffer.from(JSON.stringify({ ...event, eventId: `req_${randomUUID()}` })), ref: 'test#0' }], { bus: 'postgres' }));
    expect(await db('allowances').where({ organization_id: organizationId }).first('credits_balance', 'credits_exhausted')).toMatchObject({ credits_exhausted: false });
    const refused = await seenWithin(1_000, async () => (await refusal(access.authorize(principal, 'company-profile', 'endpoint')).catch(() => undefined))?.code === 'credits_exhausted');
    expect(refused).toBeLessThan(1_000);
    expect((await access.authorize(principal, 'company-financials', 'endpoint')).measure.quantity).toBe(5);
  });

  it('when a call counts as more calls than are left under the cap then it is refused with limit_reached, and one that fits is served', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await db('allowances').where({ organization_id: organizationId }).update({ calls_used: 9 });
    await setCallsCap(db, { organizationId, callsCap: 10, actor: 'test', reason: 'one call left' });
    await setProductOverride(db, organizationId, 'company-report', { quantity: 2, unit: 'calls' });
    await seenWithin(1_000, async () => (await refusal(access.authorize(principal, 'company-report', 'endpoint')).catch(() => undefined))?.code === 'limit_reached');
    const err = await refusal(access.authorize(principal, 'company-report', 'endpoint'));
    expect(err.status).toBe(429);
    expect(err.message).toContain('This call counts as 2 calls, more than the 1 left');
    expect(err.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    await setProductOverride(db, organizationId, 'company-report', { quantity: 1, unit: 'calls' });
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-report', 'endpoint').then(() => true, () => false)));
  });

  it('when calls follow one another faster than the worker applies them then the served ones count against the balance until applied, and not twice after', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await leaveCredits(organizationId, 13);
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-credit-report', 'endpoint').then(() => true, () => false)));
    // Served and published, as the API does, with no worker running: 13 - 5 - 8 leaves nothing.
    const served: string[] = [];
    for (const product of ['company-financials', 'company-profile']) {
      const grant = await access.authorize(principal, product, 'endpoint');
      served.push(`req_${randomUUID()}`);
      access.charged(grant, served.at(-1)!);
    }
    expect((await refusal(access.authorize(principal, 'service_search_companies', 'tool'))).code).toBe('credits_exhausted');
    // A reload that does not include them (a 1-credit top-up notifies): they still count.
    await changeCredits(db, { organizationId, kind: 'top_up', credits: 1, actor: 'test', reason: 'now 14' });
    await seenWithin(1_000, async () => (await access.authorize(principal, 'service_search_companies', 'tool').then(() => true, () => false)));
    expect((await refusal(access.authorize(principal, 'company-financials', 'endpoint'))).code).toBe('credits_exhausted');
    // The worker applies both (14 - 13 = 1 in the database) and a top-up of 5 makes 6: a 5-credit
    // call is served, so the applied calls are no longer counted on top.
    const event = { v: 1, organizationId, keyId: principal.keyId, source: 'api', unit: 'credits', occurredAt: new Date().toISOString() };
    const messages = [['company-financials', 5], ['company-profile', 8]].map(([product, quantity], i) => (
      { value: Buffer.from(JSON.stringify({ ...event, product, quantity, eventId: served[i] })), ref: `test#${i}` }));
    await db.transaction((trx) => applyUsageBatch(trx, messages, { bus: 'postgres' }));
    await changeCredits(db, { organizationId, kind: 'top_up', credits: 5, actor: 'test', reason: 'now 6' });
    expect(await balanceOf(organizationId)).toBe(6);
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-financials', 'endpoint').then(() => true, () => false)));
  });

  it('when a call is refused after a fresh read showed most unapplied calls applied, then the next calls are judged on that read too: one after another, never past the cap', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await setCallsCap(db, { organizationId, callsCap: 10, actor: 'test', reason: 'ten calls' });
    await seenWithin(1_000, async () => (await db('allowances').where({ organization_id: organizationId }).first('calls_cap')).calls_cap === 10
      && (await access.authorize(principal, 'company-report', 'endpoint').then(() => true, () => false)));
    // That check's call was never charged: ten served and published, one after another, as the API does.
    const served: string[] = [];
    for (let i = 0; i < 10; i++) {
      const id = `req_${randomUUID()}`;
      access.charged(await access.authorize(principal, 'company-report', 'endpoint', id), id);
      served.push(id);
    }
    // The worker applies nine of them: no flag moves, so nothing tells this process.
    const event = { v: 1, organizationId, keyId: principal.keyId, source: 'api', product: 'company-report', quantity: 1, unit: 'calls', occurredAt: new Date().toISOString() };
    await db.transaction((trx) => applyUsageBatch(trx, served.slice(0, 9).map((eventId, i) => ({ value: Buffer.from(JSON.stringify({ ...event, eventId })), ref: `test#${i}` })), { bus: 'postgres' }));
    // The cached state says 0 used and ten unapplied: refused, after a fresh read (9 used, one
    // unapplied). Every call after it as well, while the cache would still say 0 used.
    for (let i = 0; i < 3; i++) {
      expect((await refusal(access.authorize(principal, 'company-report', 'endpoint', `req_${randomUUID()}`))).code, `call ${11 + i}`).toBe('limit_reached');
    }
  });

  it('when calls are admitted at the same time (an MCP batch, parallel requests) then each holds its charge from its grant: only those the balance covers are granted, and a released one frees its share', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await leaveCredits(organizationId, 20);
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-credit-report', 'endpoint').then(() => true, () => false)));
    // Five 8-credit calls at once on 20 credits, none charged yet: two fit.
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => access.authorize(principal, 'company-profile', 'endpoint', `req_${randomUUID()}`)));
    const granted = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(granted).toHaveLength(2);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code)).toEqual(['credits_exhausted', 'credits_exhausted', 'credits_exhausted']);
    // One is not served after all (its company not found): its 8 credits are free again, once.
    access.release(granted[0]!);
    access.release(granted[0]!);
    const nextId = `req_${randomUUID()}`;
    const next = await access.authorize(principal, 'company-profile', 'endpoint', nextId);
    expect((await refusal(access.authorize(principal, 'company-profile', 'endpoint', `req_${randomUUID()}`))).code).toBe('credits_exhausted');
    // A served call keeps its hold (20 - 8 - 8 leaves 4): releasing it after the charge changes nothing.
    access.charged(next, nextId);
    access.release(next);
    expect((await refusal(access.authorize(principal, 'company-financials', 'endpoint', `req_${randomUUID()}`))).code).toBe('credits_exhausted');
  });

  it('when the billing worker stays stopped for minutes then the calls served meanwhile still count: the last balance read is not spent again', async () => {
    let clock = Date.now();
    const stopped = createAccessControl({
      db, listenConnectionString: databaseUrl, keyCacheTtlMs: 60_000, entitlementCacheTtlMs: 1_000, rateLimiter, logger: createLogger({ level: 'silent' }), now: () => clock,
    });
    try {
      await stopped.ready();
      const org = await createOrganization(db, { name: 'worker stopped test', planId: 'standard' });
      const { key } = await createApiKey(db, { organizationId: org.id, name: 'test' });
      const principal = await stopped.authenticate(`Bearer ${key}`);
      await leaveCredits(org.id, 10);
      // Two 5-credit calls served and published; no worker applies them.
      for (let i = 0; i < 2; i++) stopped.charged(await stopped.authorize(principal, 'company-financials', 'endpoint'), `req_${randomUUID()}`);
      expect((await refusal(stopped.authorize(principal, 'company-financials', 'endpoint'))).code).toBe('credits_exhausted');
      // Ten minutes on, the state read again every second or so: the balance in the database is
      // still 10, and still spent.
      for (let minute = 1; minute <= 10; minute++) {
        clock += 60_000;
        expect((await refusal(stopped.authorize(principal, 'company-financials', 'endpoint'))).code).toBe('credits_exhausted');
      }
    } finally {
      await stopped.close();
    }
  });

  it('when the server drops the pooled connections (pg_terminate_backend, a failover) then the next key check and state read take fresh ones, instead of refusing every organization for a second', async () => {
    const applicationName = `dropped-${randomUUID().slice(0, 8)}`;
    const own = createDb({ connectionString: databaseUrl, poolMax: 2, applicationName });
    let clock = Date.now();
    const dropped = createAccessControl({
      db: own, listenConnectionString: databaseUrl, keyCacheTtlMs: 60_000, entitlementCacheTtlMs: 1_000, rateLimiter, logger: createLogger({ level: 'silent' }), now: () => clock,
    });
    try {
      await dropped.ready();
      const org = await createOrganization(db, { name: 'dropped connection test', planId: 'standard' });
      const keys = await Promise.all([1, 2].map((n) => createApiKey(db, { organizationId: org.id, name: `key ${n}` })));
      const principal = await dropped.authenticate(`Bearer ${keys[0]!.key}`);
      await dropped.authorize(principal, 'company-financials', 'endpoint');
      const terminated = await db.raw<{ rows: unknown[] }>('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ?', [applicationName]);
      expect(terminated.rows.length).toBeGreaterThan(0);
      clock += 2_000; // the state is read again
      await dropped.authorize(principal, 'company-financials', 'endpoint');
      await db.raw('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ?', [applicationName]);
      expect((await dropped.authenticate(`Bearer ${keys[1]!.key}`)).organizationId).toBe(org.id); // a key not seen yet
    } finally {
      await dropped.close();
      await own.destroy();
    }
  });

  it('when the cached state is dropped between a call\'s grant and its charge (a flag write) then the call still counts', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await leaveCredits(organizationId, 13);
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-credit-report', 'endpoint').then(() => true, () => false)));
    const first = await access.authorize(principal, 'company-financials', 'endpoint');
    // The worker writes a flag column (as it does when a price is crossed): the cached state goes.
    await setFlags(organizationId, { credits_exhausted: false });
    await new Promise((r) => setTimeout(r, 300));
    access.charged(first, `req_${randomUUID()}`);
    access.charged(await access.authorize(principal, 'company-profile', 'endpoint'), `req_${randomUUID()}`);
    // 13 - 5 - 8: nothing left for another 5-credit call.
    expect((await refusal(access.authorize(principal, 'company-financials', 'endpoint'))).code).toBe('credits_exhausted');
  });

  it('when a state read already holds an applied call that is still counted as unapplied then the call it would refuse is checked afresh and served', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await leaveCredits(organizationId, 15);
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-credit-report', 'endpoint').then(() => true, () => false)));
    // A 5-credit call granted; the worker applies its event (15 → 10) before this process notes
    // it as charged, and a state read in between already shows 10, without the event in its list.
    const grant = await access.authorize(principal, 'company-financials', 'endpoint');
    const eventId = `req_${randomUUID()}`;
    const event = { v: 1, eventId, organizationId, keyId: principal.keyId, source: 'api', product: 'company-financials', quantity: 5, unit: 'credits', occurredAt: new Date().toISOString() };
    await db.transaction((trx) => applyUsageBatch(trx, [{ value: Buffer.from(JSON.stringify(event)), ref: 'test#0' }], { bus: 'postgres' }));
    await setFlags(organizationId, { credits_exhausted: false });
    await new Promise((r) => setTimeout(r, 300));
    await access.admit(principal); // the read of 10
    access.charged(grant, eventId); // now counted twice: 10 - 5 would refuse a 10-credit call
    expect(await balanceOf(organizationId)).toBe(10);
    expect((await access.authorize(principal, 'company-credit-report', 'endpoint')).measure).toEqual({ quantity: 10, unit: 'credits' });
  });

  it('when calls-priced calls follow one another faster than the worker applies them then the cap holds', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await setCallsCap(db, { organizationId, callsCap: 2, actor: 'test', reason: 'two calls' });
    await seenWithin(1_000, async () => (await access.entitlements(principal, 'endpoint')).size > 0 && (await db('allowances').where({ organization_id: organizationId }).first('calls_cap')).calls_cap === 2);
    for (let i = 0; i < 2; i++) access.charged(await access.authorize(principal, 'company-report', 'endpoint'), `req_${randomUUID()}`);
    const err = await refusal(access.authorize(principal, 'company-report', 'endpoint'));
    expect(err.code).toBe('limit_reached');
    expect(err.message).toContain('more than the 0 left');
  });

  it("when last month's limit_reached is still set then this month's calls are not refused", async () => {
    const { organizationId, principal } = await organizationWithKey();
    await db('allowances').where({ organization_id: organizationId }).update({ period: '2000-01', limit_reached: true });
    expect((await access.authorize(principal, 'company-report', 'endpoint')).measure.unit).toBe('calls');
  });

  it("when last month's row, not rolled over yet, holds a cap of 0 set for that month only then this month's calls are judged by the later months' cap, the organization's own when it has one", async () => {
    const { organizationId, principal } = await organizationWithKey();
    await db('allowances').where({ organization_id: organizationId }).update({ period: '2000-01', calls_cap: 0, calls_used: 0, limit_reached: true });
    expect((await access.authorize(principal, 'company-report', 'endpoint')).measure.unit).toBe('calls');

    // Its own cap of 0 for every month, last month's row at 100: the rollover will set 0.
    const other = await organizationWithKey();
    await db('organizations').where({ id: other.organizationId }).update({ calls_cap_own: true, calls_cap_per_period: 0 });
    await db('allowances').where({ organization_id: other.organizationId }).update({ period: '2000-01', calls_cap: 100, calls_used: 0, limit_reached: false });
    const err = await refusal(access.authorize(other.principal, 'company-report', 'endpoint'));
    expect(err.code).toBe('limit_reached');
  });

  it('when the billing worker raises and clears a flag then the change is seen within 1 s', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await access.authorize(principal, 'company-credit-report', 'endpoint'); // cached for 60 s
    await setFlags(organizationId, { credits_exhausted: true });
    const raised = await seenWithin(1_000, async () => {
      try {
        await access.authorize(principal, 'company-credit-report', 'endpoint');
        return false;
      } catch (err) {
        return (err as AppError).code === 'credits_exhausted';
      }
    });
    await setFlags(organizationId, { credits_exhausted: false });
    const cleared = await seenWithin(1_000, async () => {
      try {
        await access.authorize(principal, 'company-credit-report', 'endpoint');
        return true;
      } catch {
        return false;
      }
    });
    expect(raised).toBeLessThan(1_000);
    expect(cleared).toBeLessThan(1_000);
  });

  it('when the organization exceeds its burst then rate_limited with Retry-After and RateLimit headers', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await setOrganizationLimits(db, organizationId, { perSecond: 1, burst: 3 });
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-report', 'endpoint')).rateLimit.limit === 3);
    let err: AppError | undefined;
    for (let i = 0; i < 5 && !err; i++) err = await access.authorize(principal, 'company-report', 'endpoint').then(() => undefined, (e: AppError) => e);
    expect(err?.code).toBe('rate_limited');
    expect(err?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(err?.headers).toEqual({ 'RateLimit-Limit': '3', 'RateLimit-Remaining': '0', 'RateLimit-Reset': expect.stringMatching(/^\d+$/) });
  });

  it('when two keys of one organization call then they share its limits', async () => {
    const { organizationId, principal } = await organizationWithKey();
    await setOrganizationLimits(db, organizationId, { perSecond: 1, burst: 2 }); // before its state is first read
    const { key } = await createApiKey(db, { organizationId, name: 'second' });
    const other = await access.authenticate(`Bearer ${key}`);
    expect((await access.authorize(principal, 'company-report', 'endpoint')).rateLimit).toMatchObject({ limit: 2, remaining: 1 });
    expect((await access.authorize(other, 'company-report', 'endpoint')).rateLimit).toMatchObject({ limit: 2, remaining: 0 });
    expect((await refusal(access.authorize(other, 'company-report', 'endpoint'))).code).toBe('rate_limited');
    expect((await refusal(access.authorize(principal, 'company-report', 'endpoint'))).code).toBe('rate_limited');
  });

  it('when the organization gets its first plan then it becomes entitled within 1 s', async () => {
    const { organizationId, principal } = await organizationWithKey(null);
    expect((await refusal(access.authorize(principal, 'company-report', 'endpoint'))).code).toBe('client_not_configured');
    await setOrganizationPlan(db, organizationId, 'standard');
    await seenWithin(1_000, async () => (await access.authorize(principal, 'company-report', 'endpoint').then(() => true, () => false)));
    const allowance = await db('allowances').where({ organization_id: organizationId }).first();
    expect(allowance.credits_balance).toBe(100_000);
  });

  it('when Postgres becomes unreachable then a cached key still authenticates and authorize says entitlement_unavailable', async () => {
    const proxy = await startTcpProxy(hostAndPort(databaseUrl));
    const url = proxy.urlFor(databaseUrl);
    const proxiedDb = createDb({ connectionString: url, poolMax: 2 });
    const limiter = createInMemoryRateLimiter();
    const cut = createAccessControl({
      db: proxiedDb, listenConnectionString: url, keyCacheTtlMs: 60_000, entitlementCacheTtlMs: 100, rateLimiter: limiter, logger: createLogger({ level: 'silent' }),
    });
    try {
      await cut.ready();
      const org = await createOrganization(db, { name: 'access test', planId: 'standard' });
      const { key } = await createApiKey(db, { organizationId: org.id, name: 'test' });
      const principal = await cut.authenticate(`Bearer ${key}`);
      await new Promise((r) => setTimeout(r, 200)); // let the creation's notifications arrive first
      await cut.authorize(principal, 'company-report', 'endpoint');
      proxy.cut();
      await new Promise((r) => setTimeout(r, 150)); // past the entitlement TTL
      expect(await cut.authenticate(`Bearer ${key}`)).toEqual(principal);
      const err = await refusal(cut.authorize(principal, 'company-report', 'endpoint'));
      expect(err.code).toBe('entitlement_unavailable');
      expect(err.status).toBe(503);
      expect(err.headers?.['RateLimit-Limit']).toBe('40'); // the last limits known
    } finally {
      await cut.close();
      await limiter.close();
      await proxiedDb.destroy();
      await proxy.close();
    }
  });
});
