import type { Db } from '../db/index.js';
import type { UsageEvent } from '../usage/index.js';
import { refundRefusedCharges } from './adjust-allowance.js';
import { periodOf } from './billing-period.js';
import { ledgerEntryFromRow } from './ledger-export.js';
import { systemReason } from './system-reasons.js';

/**
 * Calls refused (503) whose usage events were sent and not confirmed in time: the bus may still
 * store them after their callers were refused (a stalled broker stores what it had read when it
 * resumes). Each gets a `refused` ledger row at once, worth nothing, under the event's own id
 * (migration 025): the ledger charges each id once, so the worker then takes a late event for
 * one already applied and charges nothing. An event the worker applied before this ran was
 * charged though its call was refused: that charge is given back at once (an `adjustment`
 * row, adjust-allowance.ts's refundRefusedCharges). Returns the ids refunded.
 */
export async function recordRefusedCalls(db: Db, events: UsageEvent[], now: Date = new Date()): Promise<string[]> {
  if (events.length === 0) return [];
  const recorded = new Set(
    await db('usage_ledger')
      .insert(events.map((e) => ({
        event_id: e.eventId,
        organization_id: e.organizationId,
        entry_type: 'refused',
        source: e.source,
        key_id: e.keyId,
        product: e.product,
        quantity: 0,
        unit: e.unit,
        credits_delta: 0,
        calls_delta: 0,
        period: periodOf(new Date(e.occurredAt)),
        occurred_at: e.occurredAt,
        applied_at: now,
        reason: systemReason.refusedCall(e.quantity, e.unit, e.product),
      })))
      .onConflict('event_id')
      .ignore()
      .returning<{ event_id: string }[]>('event_id')
      .then((rows) => rows.map((r) => r.event_id)),
  );
  const held = events.map((e) => e.eventId).filter((id) => !recorded.has(id));
  if (held.length === 0) return [];
  const charged = await db('usage_ledger').whereIn('event_id', held).andWhere({ entry_type: 'usage' }).select<Record<string, unknown>[]>('*');
  return refundRefusedCharges(db, charged.map((r) => ({ ...ledgerEntryFromRow(r), organizationId: r.organization_id as string })), now);
}
