import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyUsageBatch } from '../core/billing/apply-usage-batch.js';
import { replayDueDeadLetters } from '../core/billing/replay-due-dead-letters.js';
import { recordAudit } from '../core/dashboard-auth/index.js';
import { createDb, migrateLatest } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageConsumer } from '../core/usage/index.js';
import { startBillingWorker } from '../billing-worker/start-billing-worker.js';
import { allowanceOf, createBillingOrg, usageEvent } from './billing-fixtures.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

// An event dated ahead of the billing worker's clock by more than the 5 min skew allowed (a
// producer whose clock runs fast) is a dead letter. Before, it stayed one until an operator
// replayed it by hand; now one at most a day ahead is replayed by the worker itself once its
// time has come, charged once, in its own month. A database of its own: the sweep replays every
// due dead letter it finds, and other files' are not this file's to charge.

let scratch: ScratchDatabase;
let db: Knex;

beforeAll(async () => {
  scratch = await createScratchDatabase('self_replay');
  db = createDb({ connectionString: scratch.url, poolMax: 4, applicationName: 'self-replay-test' });
  await migrateLatest(db);
});
afterAll(async () => {
  await db?.destroy();
  await scratch?.drop();
});

const apply = (values: unknown[], now: Date) => db.transaction((trx) => applyUsageBatch(trx, values.map((v, i) => ({ value: JSON.stringify(v), ref: `test#${i}` })), { bus: 'postgres', now }));
const deadLetterOf = (eventId: string) => db('usage_dead_letters').where('payload', 'like', `%${eventId}%`).first<{ id: string; reason: string; replay_after: Date | null; resolved_at: Date | null; resolved_by: string | null; resolution: string | null }>();

describe('a usage event dated ahead of the billing worker\'s clock', () => {
  it('when it is two hours ahead then it is a dead letter due five minutes before its time, and the sweep charges it then, once, in its own month, on the activity log', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100, period: '2026-11' });
    const now = new Date('2026-11-30T23:00:00Z');
    // In December by its own clock: charged in December's allowance once its time has come.
    const ahead = usageEvent(organizationId, { occurredAt: '2026-12-01T01:00:00.000Z', quantity: 5, unit: 'credits' });
    const outcome = await apply([ahead], now);
    expect(outcome.applied).toBe(0);
    expect(outcome.deadLetters[0]!.reason).toBe(
      "occurredAt 2026-12-01T01:00:00.000Z is 2 h ahead of the billing worker's clock (2026-11-30T23:00:00.000Z), more than the 5 min allowed: check the clock of the host that produced it (API or tool server); not charged yet: the billing worker charges it by itself from 2026-12-01T00:55:00.000Z",
    );
    expect((await deadLetterOf(ahead.eventId))?.replay_after?.toISOString()).toBe('2026-12-01T00:55:00.000Z');

    // Not yet due: nothing replayed, and the month has not moved.
    expect(await replayDueDeadLetters(db, { now: new Date('2026-12-01T00:54:59Z') })).toEqual([]);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ period: '2026-11', credits_balance: 100 });

    const due = new Date('2026-12-01T00:55:00Z');
    const replayed = await replayDueDeadLetters(db, { now: due, audit: recordAudit });
    expect(replayed).toEqual([expect.objectContaining({ outcome: 'charged', eventId: ahead.eventId })]);
    expect(await db('usage_ledger').where({ event_id: ahead.eventId }).select('period', 'credits_delta')).toEqual([{ period: '2026-12', credits_delta: -5 }]);
    expect(await deadLetterOf(ahead.eventId)).toMatchObject({ resolved_by: 'billing-worker', resolution: 'replayed: charged' });
    expect(await db('audit_log').where({ organization_id: organizationId, action: 'usage.dead_letter_replayed' }).pluck('actor')).toEqual(['billing-worker']);
    // A later sweep, and the event arriving again, charge nothing more.
    expect(await replayDueDeadLetters(db, { now: new Date('2026-12-01T01:00:00Z') })).toEqual([]);
    expect((await apply([ahead], new Date('2026-12-01T01:00:00Z'))).duplicates).toBe(1);
    expect(await db('usage_ledger').where({ event_id: ahead.eventId }).pluck('credits_delta')).toEqual([-5]);
  });

  it('when it is more than a day ahead then it waits for an operator: no sweep replays it, even once its time has come', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const now = new Date('2026-11-27T15:00:00Z');
    const farAhead = usageEvent(organizationId, { occurredAt: '2026-11-29T15:00:00.000Z' });
    const [dead] = (await apply([farAhead], now)).deadLetters;
    expect(dead!.reason).toMatch(/is 2 days ahead .*; not charged, replay it once that time has passed$/);
    expect((await deadLetterOf(farAhead.eventId))?.replay_after).toBeNull();
    expect(await replayDueDeadLetters(db, { now: new Date('2026-11-29T15:00:00Z') })).toEqual([]);
    expect(await deadLetterOf(farAhead.eventId)).toMatchObject({ resolved_at: null });
  });

  it('when one due is still refused then it is left to an operator, and the next sweeps leave it alone', async () => {
    // Its organization deleted meanwhile: stood for here by one that never existed.
    const orphan = usageEvent('org_self_replay_gone', { occurredAt: '2026-11-27T15:10:00.000Z' });
    await db('usage_dead_letters').insert({ bus: 'postgres', payload: JSON.stringify(orphan), reason: 'ahead (test)', source: `test-orphan-${orphan.eventId}`, replay_after: new Date('2026-11-27T15:05:00Z') });
    const replayed = await replayDueDeadLetters(db, { now: new Date('2026-11-27T15:06:00Z') });
    expect(replayed).toEqual([expect.objectContaining({ outcome: 'still_failing', eventId: orphan.eventId, reason: expect.stringContaining('unknown organization org_self_replay_gone') })]);
    expect(await deadLetterOf(orphan.eventId)).toMatchObject({ resolved_at: null, replay_after: null });
    expect(await replayDueDeadLetters(db, { now: new Date('2026-11-27T16:00:00Z') })).toEqual([]);
  });

  it('when the billing worker starts with a dead letter due then its sweep charges it, says so, and the worker stops cleanly', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const event = usageEvent(organizationId, { quantity: 5, unit: 'credits' });
    // As the worker wrote it a few minutes ago, with the event then ahead of its clock.
    await db('usage_dead_letters').insert({ bus: 'postgres', payload: JSON.stringify(event), reason: 'ahead (test)', source: `test-due-${event.eventId}`, replay_after: new Date(Date.now() - 1_000) });
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const worker = await startBillingWorker({ db, consumer: createPostgresUsageConsumer({ db, connectionString: scratch.url, logger, batchSize: 100, pollMs: 200 }), logger, rolloverIntervalMs: 60_000 });
    try {
      // The first sweep runs before the worker says it is consuming.
      expect(await db('usage_ledger').where({ event_id: event.eventId }).pluck('credits_delta')).toEqual([-5]);
      expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(95);
      expect(lines.filter((l) => l.msg === 'dead letters whose time had come replayed')).toEqual([expect.objectContaining({ level: 'info', charged: 1, alreadyCharged: 0, stillFailing: 0 })]);
    } finally {
      await worker.stop();
    }
  });
});
