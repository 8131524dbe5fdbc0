import type { Knex } from 'knex';
import { AppError } from '../errors/index.js';
import { lockAllowances } from './allowance-rows.js';
import { periodOf } from './billing-period.js';
import { LEDGER_USAGE_BUCKETS_SQL } from './daily-usage.js';
import { reconcileLedger } from './reconcile-ledger.js';

export interface RebuiltUsageTotals {
  organizationId: string;
  /** Daily usage buckets that did not add up to their ledger rows, now rewritten. */
  bucketsOff: number;
  creditsUsedBefore: number;
  creditsUsedAfter: number;
}

/**
 * Recomputes from the ledger what the billing worker keeps beside it so that reads need not sum
 * it: the organization's daily usage buckets (usage_daily, the allowance report's source) and
 * its allowance's credits_used. For when `reconcile` shows them off (a worker of a version
 * before migration 015 applied usage after the backfill, say). Balances and calls used are the
 * ledger's own bookkeeping and are never touched here: a difference there needs a person.
 *
 * One transaction (a savepoint within the caller's), under the organization's allowance lock,
 * the lock the worker takes before it writes ledger rows and buckets: nothing moves while the
 * totals are summed. It reads the organization's whole usage ledger: seconds for millions of rows, during which
 * the worker waits for this organization.
 */
export function rebuildUsageTotals(db: Knex, organizationId: string, now = new Date()): Promise<RebuiltUsageTotals> {
  return db.transaction(async (trx) => {
    const allowance = (await lockAllowances(trx, [organizationId], periodOf(now))).get(organizationId);
    if (!allowance) throw new AppError('not_found', `No organization has the id ${organizationId}.`);
    const before = (await reconcileLedger(trx, { organizationIds: [organizationId] })).differences[0];
    await trx('usage_daily').where({ organization_id: organizationId }).delete();
    const ids = [organizationId];
    await trx.raw(
      `INSERT INTO usage_daily (organization_id, period, day, source, product, key_id, unit, quantity, calls, credits_delta, calls_delta)
       SELECT organization_id, period, day, source, product, key_id, unit, quantity, calls, credits_delta, calls_delta FROM (${LEDGER_USAGE_BUCKETS_SQL}) ledger`,
      [ids, ids],
    );
    const { rows } = await trx.raw<{ rows: { used: number | null }[] }>(
      `SELECT (-SUM(credits_delta))::bigint AS used FROM usage_ledger WHERE organization_id = ? AND period = ? AND entry_type = 'usage'`,
      [organizationId, allowance.period],
    );
    const creditsUsedAfter = rows[0]?.used ?? 0;
    await trx('allowances').where({ organization_id: organizationId }).update({ credits_used: creditsUsedAfter });
    return { organizationId, bucketsOff: before?.dailyBucketsOff ?? 0, creditsUsedBefore: allowance.credits_used, creditsUsedAfter };
  });
}
