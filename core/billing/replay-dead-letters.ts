import type { Knex } from 'knex';
import type { AuditEntry } from '../dashboard-auth/audit-log.js';
import { databaseReason, isDataError } from '../usage/apply-one-by-one.js';
import { parseUsageMessage } from '../usage/parse-usage-message.js';
import { applyUsageBatch } from './apply-usage-batch.js';

export type ReplayOutcome = 'charged' | 'already_charged' | 'still_failing' | 'not_open';

export interface ReplayResult {
  id: number;
  outcome: ReplayOutcome;
  /** The usage event's id, when the payload is one. */
  eventId: string | null;
  /** still_failing: why, in the worker's words; not_open: no such dead letter, or replayed already. */
  reason: string | null;
}

export interface ReplayDeadLettersOptions {
  /** These dead letters; without, every open one, oldest first. */
  ids?: number[];
  /** Who replays them (kept on each row). */
  actor: string;
  now?: Date;
  /** Called with each result as it is decided (progress for a long replay). */
  onResult?: (result: ReplayResult) => void;
  /** Records a charge in the organization's activity log, in the charge's transaction. */
  audit?: (trx: Knex, entry: AuditEntry) => Promise<void>;
}

/** A replay that the batch would have dead-lettered again: rolls its savepoint back. */
class StillDead extends Error {}

const OPEN_PAGE = 500;

/** Dead letters not replayed yet: usage that was served and is not billed (the operators' overview shows it). */
export async function countOpenDeadLetters(db: Knex): Promise<number> {
  const row = await db('usage_dead_letters').whereNull('resolved_at').count<{ n: string }[]>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/**
 * Replays dead letters once their cause is fixed (an organization created late, a worker that
 * now reads what it refused): each one is applied by the billing worker's own applyUsageBatch,
 * in a transaction of its own that first locks its row, so a replay running twice charges once,
 * and the ledger's unique event id makes an event already charged a no-op. A payload that is
 * still not billable leaves its row open, unchanged, and says why; nothing is half-applied (the
 * attempt runs in a savepoint). A replayed row stays, with who replayed it, when and the outcome.
 */
export async function replayDeadLetters(db: Knex, options: ReplayDeadLettersOptions): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  const record = (result: ReplayResult) => {
    results.push(result);
    options.onResult?.(result);
  };
  if (options.ids) {
    for (const id of options.ids) record(await replayOne(db, id, options));
    return results;
  }
  let after = 0;
  for (;;) {
    const ids = await db('usage_dead_letters').whereNull('resolved_at').where('id', '>', after).orderBy('id').limit(OPEN_PAGE).pluck<number[]>('id');
    for (const id of ids) record(await replayOne(db, Number(id), options));
    if (ids.length < OPEN_PAGE) return results;
    after = Number(ids[ids.length - 1]);
  }
}

async function replayOne(db: Knex, id: number, options: ReplayDeadLettersOptions): Promise<ReplayResult> {
  const now = options.now ?? new Date();
  return db.transaction(async (trx) => {
    const row = await trx('usage_dead_letters').where({ id }).whereNull('resolved_at').forUpdate().first<{ bus: 'postgres' | 'kafka'; payload: string } | undefined>('bus', 'payload');
    if (!row) return { id, outcome: 'not_open', eventId: null, reason: 'no open dead letter has this id' };
    const parsed = parseUsageMessage(row.payload);
    if (!parsed.ok) return { id, outcome: 'still_failing', eventId: null, reason: parsed.reason };
    const eventId = parsed.event.eventId;
    let applied: number;
    try {
      applied = await trx.transaction(async (savepoint) => {
        const outcome = await applyUsageBatch(savepoint, [{ value: row.payload, ref: `usage_dead_letters#${id}` }], { bus: row.bus, now });
        if (outcome.deadLetters.length > 0) throw new StillDead(outcome.deadLetters[0]!.reason);
        return outcome.applied;
      });
    } catch (err) {
      if (err instanceof StillDead) return { id, outcome: 'still_failing', eventId, reason: err.message };
      if (isDataError(err)) return { id, outcome: 'still_failing', eventId, reason: `apply failed: ${databaseReason(err)}` };
      throw err;
    }
    const outcome: ReplayOutcome = applied === 1 ? 'charged' : 'already_charged';
    if (outcome === 'charged') {
      const { organizationId, product, quantity, unit } = parsed.event;
      await options.audit?.(trx, { organizationId, actor: options.actor, action: 'usage.dead_letter_replayed', details: { eventId, product, quantity, unit, deadLetterId: id } });
    }
    await trx('usage_dead_letters').where({ id }).update({ resolved_at: now, resolved_by: options.actor, resolution: outcome === 'charged' ? 'replayed: charged' : 'replayed: already in the ledger' });
    return { id, outcome, eventId, reason: null };
  });
}
