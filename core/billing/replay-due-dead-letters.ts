import type { Knex } from 'knex';
import type { AuditEntry } from '../dashboard-auth/audit-log.js';
import { replayDeadLetters, type ReplayResult } from './replay-dead-letters.js';

/** Who a replay by the worker itself is recorded as (the dead letter's `resolved_by`, the audit's actor). */
export const SELF_REPLAY_ACTOR = 'billing-worker';

/** At most this many a sweep: a producer hours ahead sets aside every call it served meanwhile,
 * and the sweep that finds them due must not hold the worker's pool for minutes. */
const DUE_PER_SWEEP = 500;

/**
 * Replays the open dead letters whose `replay_after` has passed (events that were a little
 * ahead of the worker's clock, migration 039, and are chargeable now), soonest due first, each as
 * `cli billing replay-dead-letters` replays it (replayDeadLetters: under its row's lock, charged
 * once, in its own month, audited). One still refused (an organization deleted meanwhile, a
 * worker whose clock is behind the one that set it aside) is left to an operator: its
 * `replay_after` is cleared, so that sweeps do not retry it for ever.
 */
export async function replayDueDeadLetters(db: Knex, options: { now?: Date; limit?: number; audit?: (trx: Knex, entry: AuditEntry) => Promise<void> } = {}): Promise<ReplayResult[]> {
  const now = options.now ?? new Date();
  const ids = await db('usage_dead_letters')
    .whereNull('resolved_at')
    .where('replay_after', '<=', now)
    .orderBy('replay_after')
    .limit(options.limit ?? DUE_PER_SWEEP)
    .pluck<string[]>('id');
  if (ids.length === 0) return [];
  const results = await replayDeadLetters(db, { ids: ids.map(Number), actor: SELF_REPLAY_ACTOR, now, audit: options.audit });
  const stuck = results.filter((r) => r.outcome === 'still_failing').map((r) => r.id);
  if (stuck.length > 0) await db('usage_dead_letters').whereIn('id', stuck).whereNull('resolved_at').update({ replay_after: null });
  return results;
}
