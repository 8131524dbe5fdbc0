import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addThreshold, backoffMs, deliverDueWebhooks, evaluateThresholds, firedThresholds, listDeliveries, setWebhookUrl, signWebhookBody, verifyWebhookSignature, alertSettings,
} from '../core/alerts/index.js';
import { periodOf } from '../core/billing/billing-period.js';
import { changeCredits, createOrganization, ensureDefaultPlans, recordRefusedCalls, rollOverDueAllowances, setCallsCap } from '../core/billing/index.js';
import type { Db } from '../core/db/index.js';
import { percentUsed } from '../core/finance/index.js';
import type { UsageEvent } from '../core/usage/index.js';
import { allowanceOf } from './billing-fixtures.js';
import { applyUsage, usageEventFor } from './dashboard-fixtures.js';
import { testDb } from './support/database.js';

// Thresholds → signed webhooks: once per crossing, re-armed once the condition has cleared by a
// margin (a top-up, a cap raised, calls given back) or by a new period, retried with exponential
// backoff, and logged.

interface Receiver {
  url: string;
  received: { headers: http.IncomingHttpHeaders; body: string }[];
  /** Status codes to answer with, in order; then 204. */
  answers: number[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const r = { received: [], answers: [] } as unknown as Receiver;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      r.received.push({ headers: req.headers, body });
      res.writeHead(r.answers.shift() ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return r;
}

let db: Db;
let receiver: Receiver;

beforeAll(async () => {
  db = testDb();
  await ensureDefaultPlans(db);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await db?.destroy();
});

/** An organization with 1 000 credits (the standard plan's grant replaced by a small one). */
async function smallOrg(name: string) {
  const org = await createOrganization(db, { name, planId: null });
  await changeCredits(db, { organizationId: org.id, kind: 'grant', credits: 1_000, actor: 'test', reason: 'test set-up' });
  await setWebhookUrl(db, org.id, receiver.url, { allowPrivateTargets: true });
  return org.id;
}

// The receiver listens on 127.0.0.1: these tests allow private targets, as a development or
// test deployment does (WEBHOOK_ALLOW_PRIVATE_TARGETS unset outside production).
const deliver = (options: Parameters<typeof deliverDueWebhooks>[1] = {}) => deliverDueWebhooks(db, { allowPrivateTargets: true, ...options });

/**
 * Runs delivery passes until this organization's delivery reached `attempts` (other test
 * files' due deliveries share the table and a pass takes at most a batch of them).
 */
async function deliverUntil(organizationId: string, attempts: number, options: Parameters<typeof deliverDueWebhooks>[1] = {}) {
  for (let i = 0; i < 20; i++) {
    await deliver(options);
    const [d] = await listDeliveries(db, organizationId);
    if (d && d.attempts >= attempts) return d;
  }
  throw new Error(`delivery of ${organizationId} never reached attempt ${attempts}`);
}

const deliveriesOf = (organizationId: string) => receiver.received.filter((r) => JSON.parse(r.body).organizationId === organizationId);
/** One evaluation, then delivery passes until nothing is due (the table is shared). */
const pass = async () => {
  await evaluateThresholds(db);
  for (let i = 0; i < 20; i++) {
    const sent = await deliver();
    if (sent.delivered + sent.retrying + sent.failed === 0) return;
  }
};

describe('when usage crosses a percentage threshold', () => {
  it('then one signed webhook is sent however many times the evaluator runs, and a top-up re-arms it', async () => {
    const orgId = await smallOrg('Alerts percent');
    await addThreshold(db, orgId, { kind: 'percent_used', value: 50 });
    await applyUsage(db, Array.from({ length: 40 }, () => usageEventFor(orgId, { quantity: 10 }))); // 400 of 1 000
    await pass();
    expect(deliveriesOf(orgId)).toHaveLength(0);

    await applyUsage(db, Array.from({ length: 11 }, () => usageEventFor(orgId, { quantity: 10 }))); // 510 of 1 000
    for (let i = 0; i < 4; i++) await pass();
    expect(deliveriesOf(orgId)).toHaveLength(1);
    const [hook] = deliveriesOf(orgId);
    const { webhookSecret } = await alertSettings(db, orgId);
    expect(hook!.headers['x-signature']).toBe(signWebhookBody(webhookSecret, hook!.body));
    expect(verifyWebhookSignature({ secret: webhookSecret, body: hook!.body, signature: hook!.headers['x-signature'] as string, timestamp: hook!.headers['x-webhook-timestamp'] as string })).toBe(true);
    expect(JSON.parse(hook!.body)).toMatchObject({ type: 'allowance.threshold_crossed', threshold: { kind: 'percent_used', value: 50 }, allowance: { creditsUsed: 510, creditsBalance: 490, percentUsed: 51 } });
    expect(await firedThresholds(db, orgId)).toHaveLength(1);
    const log = await listDeliveries(db, orgId);
    expect(log).toMatchObject([{ status: 'delivered', attempts: 1, lastStatusCode: 204 }]);

    // A top-up brings usage back under 50 %: the threshold re-arms, and the banner goes.
    await changeCredits(db, { organizationId: orgId, kind: 'top_up', credits: 1_000, actor: 'test', reason: 'bought more' });
    await pass();
    expect(await firedThresholds(db, orgId)).toHaveLength(0);
    expect(deliveriesOf(orgId)).toHaveLength(1);
    // The next crossing alerts again: 510 + 550 = 1 060 of 2 000 used.
    await applyUsage(db, Array.from({ length: 55 }, () => usageEventFor(orgId, { quantity: 10 })));
    await pass();
    await pass();
    expect(deliveriesOf(orgId)).toHaveLength(2);
  });
});

/** Calls of the call-priced company-report, each counted against the calls cap. */
const reportCalls = (orgId: string, n: number) => Array.from({ length: n }, () => usageEventFor(orgId, { product: 'company-report', quantity: 1, unit: 'calls' }));
const capThisMonth = (orgId: string, callsCap: number | null) => setCallsCap(db, { organizationId: orgId, callsCap, thisPeriodOnly: true, actor: 'cli:test', reason: 'test' });
const bodiesOf = (orgId: string) => deliveriesOf(orgId).map((r) => JSON.parse(r.body) as { allowance: Record<string, unknown> });

describe('when the calls cap is raised after a percentage threshold fired on it', () => {
  it('then the threshold re-arms (banner gone) and the next crossing of the new cap sends one webhook', async () => {
    const orgId = await smallOrg('Alerts cap raised');
    await addThreshold(db, orgId, { kind: 'percent_used', value: 50 });
    await capThisMonth(orgId, 2);
    await applyUsage(db, reportCalls(orgId, 2)); // 2 of 2: 100 %
    await pass();
    expect(bodiesOf(orgId).map((b) => b.allowance)).toMatchObject([{ callsUsed: 2, callsCap: 2, percentUsed: 100 }]);

    // Raised to 3: 2 of 3 is 66 %, still over 50 %. Nothing re-arms and nothing is sent again.
    await capThisMonth(orgId, 3);
    await pass();
    expect(await firedThresholds(db, orgId)).toHaveLength(1);
    // Raised to 100: 2 of 100 is 2 %. The threshold re-arms, so its banner no longer says 50 % is used.
    await capThisMonth(orgId, 100);
    await pass();
    expect(await firedThresholds(db, orgId)).toEqual([]);
    expect(deliveriesOf(orgId)).toHaveLength(1);

    await applyUsage(db, reportCalls(orgId, 47)); // 49 of 100
    await pass();
    expect(deliveriesOf(orgId)).toHaveLength(1);
    await applyUsage(db, reportCalls(orgId, 1)); // 50 of 100: reached again, later in the month
    for (let i = 0; i < 3; i++) await pass();
    await applyUsage(db, reportCalls(orgId, 10)); // further use is the same crossing
    for (let i = 0; i < 3; i++) await pass();
    expect(bodiesOf(orgId).map((b) => b.allowance)).toMatchObject([{ callsCap: 2 }, { callsUsed: 50, callsCap: 100, percentUsed: 50 }]);
    expect(await firedThresholds(db, orgId)).toHaveLength(1);
  });

  it('then a cap removed re-arms it too, and so do calls given back (a 503 refund) that bring use under the threshold', async () => {
    const orgId = await smallOrg('Alerts cap removed');
    await addThreshold(db, orgId, { kind: 'percent_used', value: 50 });
    await capThisMonth(orgId, 2);
    const [first] = reportCalls(orgId, 1);
    await applyUsage(db, [first!]); // 1 of 2: 50 %
    await pass();
    expect(deliveriesOf(orgId)).toHaveLength(1);
    // No cap: calls measure nothing, and 0 of 1 000 credits are used.
    await capThisMonth(orgId, null);
    await pass();
    expect(await firedThresholds(db, orgId)).toEqual([]);
    await capThisMonth(orgId, 2); // 1 of 2 again: a new crossing, alerted once
    for (let i = 0; i < 3; i++) await pass();
    expect(deliveriesOf(orgId)).toHaveLength(2);
    // The call was refused (503) after it was charged: its refund gives it back, 0 of 2.
    expect(await recordRefusedCalls(db, [first!])).toEqual([first!.eventId]);
    await pass();
    expect(await firedThresholds(db, orgId)).toEqual([]);
    await applyUsage(db, reportCalls(orgId, 1));
    for (let i = 0; i < 3; i++) await pass();
    expect(deliveriesOf(orgId)).toHaveLength(3);
  });
});

describe('when credits are added after a balance threshold fired', () => {
  it('then it re-arms only once the balance is no longer below it, and fires once at the next crossing', async () => {
    const orgId = await smallOrg('Alerts balance re-armed');
    await addThreshold(db, orgId, { kind: 'balance_below', value: 900 });
    await applyUsage(db, Array.from({ length: 11 }, () => usageEventFor(orgId, { quantity: 10 }))); // 890 left
    await pass();
    expect(deliveriesOf(orgId)).toHaveLength(1);
    await changeCredits(db, { organizationId: orgId, kind: 'grant', credits: 5, actor: 'test', reason: 'not enough' }); // 895: still below
    await pass();
    expect(await firedThresholds(db, orgId)).toHaveLength(1);
    await changeCredits(db, { organizationId: orgId, kind: 'grant', credits: 105, actor: 'test', reason: 'enough' }); // 1 000
    await pass();
    expect(await firedThresholds(db, orgId)).toEqual([]);
    await applyUsage(db, Array.from({ length: 11 }, () => usageEventFor(orgId, { quantity: 10 }))); // 890 again
    for (let i = 0; i < 3; i++) await pass();
    expect(deliveriesOf(orgId)).toHaveLength(2);
  });
});

/** Charges one call of 10 credits, for the test to refund later. */
const chargeTen = async (orgId: string): Promise<UsageEvent> => {
  const event = usageEventFor(orgId, { quantity: 10 });
  await applyUsage(db, [event]);
  return event;
};
const topUp = (orgId: string, credits: number) => changeCredits(db, { organizationId: orgId, kind: 'top_up', credits, actor: 'test', reason: 'test top-up' });
/**
 * During an outage each call is refused (503) after it was charged, its credits given back, and
 * the next one charged: `times` such rounds, a pass after each step. Returns `figure` of the
 * allowance after each refund and each charge, and how many thresholds showed as fired (the
 * banner) after each refund's pass.
 */
async function refundAndChargeAgain(orgId: string, charged: UsageEvent, times: number, figure: (a: NonNullable<Awaited<ReturnType<typeof allowanceOf>>>) => number | null) {
  const figures: (number | null)[] = [];
  const banners: number[] = [];
  let last = charged;
  for (let i = 0; i < times; i++) {
    expect(await recordRefusedCalls(db, [last])).toEqual([last.eventId]);
    figures.push(figure((await allowanceOf(db, orgId))!));
    await pass();
    banners.push((await firedThresholds(db, orgId)).length);
    last = await chargeTen(orgId);
    figures.push(figure((await allowanceOf(db, orgId))!));
    await pass();
  }
  return { figures, banners };
}
const percentOf = (a: { credits_used: number; credits_balance: number; calls_used: number; calls_cap: number | null }) =>
  percentUsed({ creditsUsed: a.credits_used, creditsBalance: a.credits_balance, callsUsed: a.calls_used, callsCap: a.calls_cap });

describe('when a refund brings use back just under a percentage threshold that fired', () => {
  it('then it stays fired and the next charge sends nothing again, however many times; a top-up that takes use below 95 % of the threshold re-arms it, and the next crossing sends one webhook', async () => {
    const orgId = await smallOrg('Alerts percent margin');
    await addThreshold(db, orgId, { kind: 'percent_used', value: 80 });
    await applyUsage(db, Array.from({ length: 79 }, () => usageEventFor(orgId, { quantity: 10 })));
    const charged = await chargeTen(orgId); // 800 of 1 000: 80 %
    await pass();
    expect(deliveriesOf(orgId)).toHaveLength(1);

    // A refund puts the 10 credits back in the balance (the use stays, as the ledger's does):
    // 800 of 1 010 is 79.2 %; the next charge makes it 810 of 1 010, 80.2 %; and so on. One
    // webhook in all.
    const rounds = await refundAndChargeAgain(orgId, charged, 3, percentOf);
    expect(deliveriesOf(orgId)).toHaveLength(1);
    expect(rounds).toEqual({ figures: [79, 80, 79, 80, 79, 80], banners: [1, 1, 1] });
    expect(await allowanceOf(db, orgId)).toMatchObject({ credits_used: 830, credits_balance: 200 });

    // A tiny top-up: 830 of 1 092 is 76.01 %, not below 76 %. Still fired.
    await topUp(orgId, 62);
    await pass();
    expect(await firedThresholds(db, orgId)).toHaveLength(1);
    // 830 of 1 093 is 75.94 %: re-armed, the banner gone, nothing sent.
    await topUp(orgId, 1);
    await pass();
    expect(await firedThresholds(db, orgId)).toEqual([]);
    expect(deliveriesOf(orgId)).toHaveLength(1);
    // 880 of 1 093 is 80.5 %: a new crossing, one webhook.
    await applyUsage(db, Array.from({ length: 5 }, () => usageEventFor(orgId, { quantity: 10 })));
    for (let i = 0; i < 3; i++) await pass();
    expect(bodiesOf(orgId).map((b) => b.allowance)).toMatchObject([
      { creditsUsed: 800, creditsBalance: 200, percentUsed: 80 },
      { creditsUsed: 880, creditsBalance: 213, percentUsed: 80 },
    ]);
  });
});

describe('when refunds lift the balance back to a balance threshold that fired', () => {
  it('then it stays fired and the next charge sends nothing again; credits that take the balance to 105 % of the threshold re-arm it, and the next crossing sends one webhook', async () => {
    const orgId = await smallOrg('Alerts balance margin');
    await addThreshold(db, orgId, { kind: 'balance_below', value: 500 });
    await applyUsage(db, Array.from({ length: 50 }, () => usageEventFor(orgId, { quantity: 10 })));
    const charged = await chargeTen(orgId); // 490 left
    await pass();
    expect(deliveriesOf(orgId)).toHaveLength(1);

    // 500 after each refund (no longer below 500), 490 after each charge: one webhook in all.
    const rounds = await refundAndChargeAgain(orgId, charged, 3, (a) => a.credits_balance);
    expect(deliveriesOf(orgId)).toHaveLength(1);
    expect(rounds).toEqual({ figures: [500, 490, 500, 490, 500, 490], banners: [1, 1, 1] });

    // 524 is under ceil(500 × 1.05) = 525: still fired. 525 re-arms it.
    await topUp(orgId, 34);
    await pass();
    expect(await firedThresholds(db, orgId)).toHaveLength(1);
    await topUp(orgId, 1);
    await pass();
    expect(await firedThresholds(db, orgId)).toEqual([]);
    expect(deliveriesOf(orgId)).toHaveLength(1);
    await applyUsage(db, Array.from({ length: 3 }, () => usageEventFor(orgId, { quantity: 10 }))); // 495
    for (let i = 0; i < 3; i++) await pass();
    expect(bodiesOf(orgId).map((b) => b.allowance)).toMatchObject([{ creditsBalance: 490 }, { creditsBalance: 495 }]);
  });

  it('then the new period re-arms it even within the margin, and the next crossing sends one webhook', async () => {
    const orgId = await smallOrg('Alerts balance margin new period');
    await addThreshold(db, orgId, { kind: 'balance_below', value: 500 });
    await applyUsage(db, Array.from({ length: 50 }, () => usageEventFor(orgId, { quantity: 10 })));
    const charged = await chargeTen(orgId); // 490 left
    await pass();
    await recordRefusedCalls(db, [charged]); // 500: within the margin
    await pass();
    expect(await firedThresholds(db, orgId)).toHaveLength(1);

    // As if it had all happened last month, which has now ended (no plan: the rollover grants nothing).
    const now = new Date();
    const lastMonth = periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));
    await db('allowances').where({ organization_id: orgId }).update({ period: lastMonth });
    await db('alert_thresholds').where({ organization_id: orgId }).update({ fired_period: lastMonth });
    await rollOverDueAllowances(db);
    expect(await allowanceOf(db, orgId)).toMatchObject({ period: periodOf(now), credits_balance: 500 });
    await pass();
    expect(await firedThresholds(db, orgId)).toEqual([]);
    await chargeTen(orgId); // 490: below again, in the new period
    for (let i = 0; i < 3; i++) await pass();
    expect(bodiesOf(orgId).map((b) => b.allowance)).toMatchObject([{ creditsBalance: 490 }, { creditsBalance: 490 }]);
  });
});

describe('when a threshold fired in an earlier period', () => {
  it('then the new period re-arms it and it fires again once', async () => {
    const orgId = await smallOrg('Alerts new period');
    const threshold = await addThreshold(db, orgId, { kind: 'balance_below', value: 2_000 });
    await pass();
    expect(deliveriesOf(orgId)).toHaveLength(1);
    await db('alert_thresholds').where({ id: threshold.id }).update({ fired_period: '2000-01' });
    await pass();
    await pass();
    expect(deliveriesOf(orgId)).toHaveLength(2);
  });
});

describe('when the receiver fails', () => {
  it('then the delivery is retried with exponential backoff and logged, and marked failed after the last attempt', async () => {
    const orgId = await smallOrg('Alerts retries');
    await addThreshold(db, orgId, { kind: 'balance_below', value: 5_000 });
    receiver.answers.push(500, 503);
    const base = 10_000;
    await evaluateThresholds(db);
    const before = Date.now();
    let d = await deliverUntil(orgId, 1, { baseBackoffMs: base });
    expect(d).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500' });
    expect(d!.nextAttemptAt!.getTime() - before).toBeGreaterThanOrEqual(base - 50);
    expect(d!.nextAttemptAt!.getTime() - Date.now()).toBeLessThanOrEqual(base);

    // Not due yet: nothing is sent.
    await deliver({ baseBackoffMs: base });
    expect(deliveriesOf(orgId)).toHaveLength(1);

    // Time passes (we move the due time instead of waiting).
    await db('webhook_deliveries').where({ id: d!.id }).update({ next_attempt_at: db.fn.now() });
    const second = Date.now();
    d = await deliverUntil(orgId, 2, { baseBackoffMs: base });
    expect(d).toMatchObject({ status: 'pending', attempts: 2, lastStatusCode: 503 });
    expect(d!.nextAttemptAt!.getTime() - second).toBeGreaterThanOrEqual(2 * base - 50);

    await db('webhook_deliveries').where({ id: d!.id }).update({ next_attempt_at: db.fn.now() });
    d = await deliverUntil(orgId, 3, { baseBackoffMs: base });
    expect(d).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 204, nextAttemptAt: null });
    expect(deliveriesOf(orgId)).toHaveLength(3);
    // Every attempt of one delivery carries the same id, so the receiver can de-duplicate.
    expect(new Set(deliveriesOf(orgId).map((r) => r.headers['x-webhook-id'])).size).toBe(1);
  });

  it('then, where private targets are not allowed (production), a webhook to a private address is refused before anything is sent', async () => {
    const orgId = await smallOrg('Alerts private target');
    await addThreshold(db, orgId, { kind: 'balance_below', value: 5_000 });
    await evaluateThresholds(db);
    const port = new URL(receiver.url).port;
    for (const [url, address] of [[receiver.url, '127.0.0.1'], [`http://localhost:${port}/hook`, '127.0.0.1'], [`http://[::ffff:10.0.0.1]:${port}/hook`, '::ffff:a00:1']] as const) {
      await setWebhookUrl(db, orgId, url, { allowPrivateTargets: true }); // as if it resolved publicly when saved
      await db('webhook_deliveries').where({ organization_id: orgId }).update({ next_attempt_at: db.fn.now(), status: 'pending' });
      const attempts = (await listDeliveries(db, orgId))[0]!.attempts;
      const d = await deliverUntil(orgId, attempts + 1, { allowPrivateTargets: false });
      expect(d, url).toMatchObject({ status: 'pending', lastStatusCode: null });
      expect(d.lastError, url).toMatch(new RegExp(`^refused: .* is ${address.replace(/[.:[\]]/g, '\\$&')}, a private address`));
    }
    expect(deliveriesOf(orgId)).toHaveLength(0);
  });

  it('then after maxAttempts the delivery is marked failed and not retried', async () => {
    const orgId = await smallOrg('Alerts give up');
    await addThreshold(db, orgId, { kind: 'balance_below', value: 5_000 });
    receiver.answers.push(500, 500);
    await evaluateThresholds(db);
    const first = await deliverUntil(orgId, 1, { maxAttempts: 2 });
    await db('webhook_deliveries').where({ id: first.id }).update({ next_attempt_at: db.fn.now() });
    await deliverUntil(orgId, 2, { maxAttempts: 2 });
    await deliver({ maxAttempts: 2 });
    expect(await listDeliveries(db, orgId)).toMatchObject([{ status: 'failed', attempts: 2, lastStatusCode: 500, nextAttemptAt: null }]);
    expect(deliveriesOf(orgId)).toHaveLength(2);
  });

  it('then the backoff doubles from the base up to the cap', () => {
    expect([1, 2, 3, 4].map((a) => backoffMs(a, 10_000, 3_600_000))).toEqual([10_000, 20_000, 40_000, 80_000]);
    expect(backoffMs(20, 10_000, 3_600_000)).toBe(3_600_000);
  });
});

describe('when an organization has no webhook address', () => {
  it('then a crossed threshold shows as a banner and no delivery is made', async () => {
    const org = await createOrganization(db, { name: 'Alerts banner only', planId: null });
    await addThreshold(db, org.id, { kind: 'balance_below', value: 10 });
    await pass();
    expect(await firedThresholds(db, org.id)).toMatchObject([{ kind: 'balance_below', value: 10 }]);
    expect(await listDeliveries(db, org.id)).toEqual([]);
  });
});

describe('when a receiver checks a signature', () => {
  it('then a changed body, another secret or an old timestamp is refused', () => {
    const sentAt = new Date('2026-11-22T10:00:00Z');
    const body = JSON.stringify({ id: 'whd_x', sentAt: sentAt.toISOString() });
    const timestamp = String(sentAt.getTime() / 1000);
    const signature = signWebhookBody('whsec_a', body);
    const now = new Date(sentAt.getTime() + 30_000);
    expect(verifyWebhookSignature({ secret: 'whsec_a', body, signature, timestamp, now })).toBe(true);
    expect(verifyWebhookSignature({ secret: 'whsec_b', body, signature, timestamp, now })).toBe(false);
    expect(verifyWebhookSignature({ secret: 'whsec_a', body: body.replace('whd_x', 'whd_y'), signature, timestamp, now })).toBe(false);
    expect(verifyWebhookSignature({ secret: 'whsec_a', body, signature, timestamp, now: new Date(sentAt.getTime() + 3_600_000) })).toBe(false);
    expect(verifyWebhookSignature({ secret: 'whsec_a', body, signature, timestamp: String(Number(timestamp) + 60), now })).toBe(false);
  });
});
