import type { Knex } from 'knex';
import { keepDeadLetters } from '../usage/apply-one-by-one.js';
import { messageText, parseUsageMessage } from '../usage/parse-usage-message.js';
import type { DeadLetter, UsageBatchOutcome, UsageBusMessage, UsageConflict } from '../usage/usage-bus.js';
import type { UsageEvent } from '../usage/usage-event.js';
import { cheapestOfEach, creditPrices, crossesPrice, evaluateFlags, flagChanges, recordFlagChanges, type FlagChange, type Flags } from './allowance-flags.js';
import { lockAllowances, type AllowanceRow } from './allowance-rows.js';
import { periodOf } from './billing-period.js';
import { addDailyUsage } from './daily-usage.js';
import { rollOverAllowance } from './roll-over-period.js';
import { systemReason } from './system-reasons.js';

export interface ApplyUsageOptions {
  bus: 'postgres' | 'kafka';
  now?: Date;
}

interface LedgerRow {
  event: UsageEvent;
  period: string;
  creditsDelta: number;
  callsDelta: number;
  balanceAfter: number;
}

interface Totals {
  creditsDelta: number;
  callsDelta: number;
  /** Credits of usage in the allowance's own period (a late event of a closed month pays, but
   * is that month's use, not this one's). */
  creditsUsedDelta: number;
  newestEventAt: string;
  before: Flags;
  after: Flags;
}

/**
 * Applies a batch of usage messages in the caller's transaction, in one pass:
 *  1. parse: anything that is not a v1 usage event, or whose time is ahead of `now` by more than
 *     the clock skew allowed or implausibly old (core/usage/occurred-at-bounds.ts), becomes a
 *     dead letter (row written here; the bus may also forward it, e.g. to the Kafka dead-letter topic);
 *  2. lock the allowance rows of the batch's organizations in id order (no deadlocks between
 *     worker replicas) and roll them over to the current month if due;
 *  3. insert one ledger row per event with ON CONFLICT (event_id) DO NOTHING; a redelivered
 *     event is found there (under the row lock, so without a race) and changes nothing;
 *  4. move each balance by the batch's sum in one UPDATE (arithmetic in SQL on the locked row)
 *     and set or clear the flags, recording every change.
 * A served call is always charged, even past zero: the 2xx has left. How far past zero a
 * balance can go is the overspend window the flags bound (docs/billing.md).
 */
export async function applyUsageBatch(trx: Knex.Transaction, messages: UsageBusMessage[], options: ApplyUsageOptions): Promise<UsageBatchOutcome> {
  const now = options.now ?? new Date();
  const deadLetters: DeadLetter[] = [];
  const events: UsageEvent[] = [];
  // Each event's message, so that an event set aside later (an unknown organization) is kept as
  // it arrived and names where it came from (`topic/partition@offset`), like a parse failure.
  // Also each id's first event, to tell a redelivery from an id reused with other content.
  const messageOf = new Map<string, { message: UsageBusMessage; event: UsageEvent }>();
  const conflicts: UsageConflict[] = [];
  let duplicates = 0;
  for (const message of messages) {
    const parsed = parseUsageMessage(message.value, now);
    if (!parsed.ok) {
      deadLetters.push({ ref: message.ref, value: messageText(message.value), reason: parsed.reason, replayAfter: parsed.replayAfter });
      continue;
    }
    const first = messageOf.get(parsed.event.eventId)?.event;
    if (first) {
      duplicates += 1;
      const differences = differencesOf(first, parsed.event);
      if (differences) conflicts.push({ eventId: first.eventId, ref: message.ref, differences });
      continue;
    }
    messageOf.set(parsed.event.eventId, { message, event: parsed.event });
    events.push(parsed.event);
  }

  const currentPeriod = periodOf(now);
  const organizationIds = [...new Set(events.map((e) => e.organizationId))].sort();
  const allowances = await lockAllowances(trx, organizationIds, currentPeriod);

  const known: UsageEvent[] = [];
  for (const event of events) {
    if (allowances.has(event.organizationId)) known.push(event);
    else {
      const { message } = messageOf.get(event.eventId)!;
      deadLetters.push({ ref: message.ref, value: messageText(message.value), reason: `unknown organization ${event.organizationId}` });
    }
  }

  const orgsWithUsage = [...new Set(known.map((e) => e.organizationId))].sort();
  const prices = await creditPrices(trx, orgsWithUsage);
  const cheapest = cheapestOfEach(prices);
  const changes: FlagChange[] = [];

  // Roll over to the newest month among now and the batch's events (an API clock slightly
  // ahead of ours must not leave its events in a month we have not opened). At most the next
  // month: an event further ahead than the skew allowed was dead-lettered above.
  const targetPeriod = new Map<string, string>();
  for (const e of known) {
    const p = periodOf(e.occurredAt);
    const t = targetPeriod.get(e.organizationId) ?? currentPeriod;
    targetPeriod.set(e.organizationId, p > t ? p : t);
  }
  for (const organizationId of orgsWithUsage) {
    const row = allowances.get(organizationId)!;
    const target = targetPeriod.get(organizationId)!;
    if (row.period < target) {
      const rolled = await rollOverAllowance(trx, row, target, now, cheapest.get(organizationId) ?? null);
      allowances.set(organizationId, rolled.row);
    }
  }

  // Optimistic: normally no event of the batch is in the ledger yet, and one INSERT (in a
  // savepoint) proves it. If any was (a redelivery), the running balances computed for the
  // batch are wrong: undo, drop the events already charged, and insert the rest. Either way
  // the check runs under the organizations' row locks, which every usage writer holds.
  let fresh = known;
  let { ledger, totals } = buildLedger(fresh, allowances);
  const clean = ledger.length === 0 || (await trx.transaction(async (sp) => {
    if ((await insertLedger(sp, ledger)) !== ledger.length) throw new AlreadyCharged();
    return true;
  }).catch((err: unknown) => {
    if (err instanceof AlreadyCharged) return false;
    throw err;
  }));
  if (!clean) {
    const { rows } = await trx.raw<{ rows: ChargedRow[] }>(
      `SELECT event_id, entry_type, organization_id, key_id, source, product, quantity, unit, occurred_at FROM usage_ledger WHERE event_id = ANY(?::text[])`,
      [known.map((e) => e.eventId)],
    );
    const already = new Map(rows.map((r) => [r.event_id, r]));
    fresh = known.filter((e) => !already.has(e.eventId));
    for (const event of known) {
      const held = already.get(event.eventId);
      // A refused call's row (record-refused-calls.ts) holds quantity 0 by design, the call's
      // own in its reason: its late event is the expected one, not an id reused, when the rest
      // matches.
      const charged = held?.entry_type === 'refused' ? { ...held, quantity: event.quantity } : held;
      const differences = charged && differencesOf(chargedEvent(charged), event);
      if (differences) conflicts.push({ eventId: event.eventId, ref: messageOf.get(event.eventId)!.message.ref, differences });
    }
    ({ ledger, totals } = buildLedger(fresh, allowances));
    // Cannot fall short now that we hold the locks; if it ever does, fail the batch (the bus
    // redelivers it) rather than charge from a wrong sum.
    const inserted = ledger.length === 0 ? 0 : await insertLedger(trx, ledger);
    if (inserted !== ledger.length) throw new Error(`usage ledger insert raced: expected ${ledger.length} rows, inserted ${inserted}`);
  }
  duplicates += known.length - fresh.length;
  await addDailyUsage(trx, ledger);

  const quiet: string[] = [];
  const flagged: string[] = [];
  for (const [organizationId, t] of totals) {
    const row = allowances.get(organizationId)!;
    t.after = evaluateFlags({
      creditsBalance: row.credits_balance + t.creditsDelta,
      callsUsed: row.calls_used + t.callsDelta,
      callsCap: row.calls_cap,
      cheapestCreditCall: cheapest.get(organizationId) ?? null,
    });
    const changed = flagChanges(organizationId, t.before, t.after, systemReason.usage());
    changes.push(...changed);
    // A balance that fell below a product's price notifies too, though no flag moved, so the
    // API refuses that product now rather than after its cached balance expires.
    const belowAPrice = crossesPrice(prices.get(organizationId) ?? [], row.credits_balance, row.credits_balance + t.creditsDelta);
    (changed.length > 0 || belowAPrice ? flagged : quiet).push(organizationId);
  }
  // Two statements on purpose: the allowances trigger NOTIFYs every API process when a flag
  // column is written (even with the same value), and each notice drops a cache entry. Only
  // the organizations whose flags changed, or whose balance fell below a price, touch them.
  await updateAllowances(trx, quiet, totals, false);
  await updateAllowances(trx, flagged, totals, true);
  await recordFlagChanges(trx, changes, now);

  if (deadLetters.length > 0) {
    await keepDeadLetters(trx, options.bus, deadLetters);
  }
  return { applied: ledger.length, appliedEventIds: ledger.map((l) => l.event.eventId), duplicates, deadLetters, conflicts };
}

interface ChargedRow {
  event_id: string;
  entry_type: string;
  organization_id: string;
  key_id: string;
  source: UsageEvent['source'];
  product: string;
  quantity: number;
  unit: UsageEvent['unit'];
  occurred_at: Date;
}

const chargedEvent = (r: ChargedRow): UsageEvent => ({
  v: 1,
  eventId: r.event_id,
  organizationId: r.organization_id,
  keyId: r.key_id,
  source: r.source,
  product: r.product,
  quantity: r.quantity,
  unit: r.unit,
  occurredAt: r.occurred_at.toISOString(),
});

const COMPARED = ['organizationId', 'keyId', 'source', 'product', 'quantity', 'unit'] as const;

/** How `dropped` differs from the event `charged` under the same id (`quantity: 5 → 7; …`), or
 * '' when it is the same event. Times compare as instants to the millisecond (the ledger keeps
 * microseconds, JavaScript dates milliseconds). */
function differencesOf(charged: UsageEvent, dropped: UsageEvent): string {
  const found: string[] = COMPARED.filter((field) => charged[field] !== dropped[field]).map((field) => `${field}: ${charged[field]} → ${dropped[field]}`);
  if (Date.parse(charged.occurredAt) !== Date.parse(dropped.occurredAt)) found.push(`occurredAt: ${charged.occurredAt} → ${dropped.occurredAt}`);
  return found.join('; ');
}

async function updateAllowances(trx: Knex.Transaction, organizationIds: string[], totals: Map<string, Totals>, withFlags: boolean): Promise<void> {
  if (organizationIds.length === 0) return;
  const t = organizationIds.map((id) => totals.get(id)!);
  await trx.raw(
    `UPDATE allowances a
        SET credits_balance = a.credits_balance + d.credits_delta,
            calls_used = a.calls_used + d.calls_delta,
            credits_used = a.credits_used + d.credits_used_delta,
            ${withFlags ? 'credits_exhausted = d.credits_exhausted, limit_reached = d.limit_reached,' : ''}
            last_event_at = GREATEST(a.last_event_at, d.newest_event_at),
            updated_at = now()
       FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::boolean[], ?::boolean[], ?::timestamptz[])
         AS d(organization_id, credits_delta, calls_delta, credits_used_delta, credits_exhausted, limit_reached, newest_event_at)
      WHERE a.organization_id = d.organization_id`,
    [
      organizationIds,
      t.map((x) => x.creditsDelta),
      t.map((x) => x.callsDelta),
      t.map((x) => x.creditsUsedDelta),
      t.map((x) => x.after.credits_exhausted),
      t.map((x) => x.after.limit_reached),
      t.map((x) => x.newestEventAt),
    ],
  );
}

class AlreadyCharged extends Error {}

function buildLedger(events: UsageEvent[], allowances: Map<string, AllowanceRow>): { ledger: LedgerRow[]; totals: Map<string, Totals> } {
  const ledger: LedgerRow[] = [];
  const totals = new Map<string, Totals>();
  const balances = new Map<string, number>();
  for (const event of events) {
    const row = allowances.get(event.organizationId)!;
    const period = periodOf(event.occurredAt);
    const creditsDelta = event.unit === 'credits' ? -event.quantity : 0;
    // A late event of a closed month still pays its credits, but no longer counts against a
    // calls cap that has already been reset.
    const callsDelta = event.unit === 'calls' && period === row.period ? event.quantity : 0;
    const creditsUsedDelta = period === row.period ? -creditsDelta : 0;
    const balanceAfter = (balances.get(event.organizationId) ?? row.credits_balance) + creditsDelta;
    balances.set(event.organizationId, balanceAfter);
    ledger.push({ event, period, creditsDelta, callsDelta, balanceAfter });
    const t = totals.get(event.organizationId);
    if (t) {
      t.creditsDelta += creditsDelta;
      t.callsDelta += callsDelta;
      t.creditsUsedDelta += creditsUsedDelta;
      if (event.occurredAt > t.newestEventAt) t.newestEventAt = event.occurredAt;
    } else {
      const before: Flags = { credits_exhausted: row.credits_exhausted, limit_reached: row.limit_reached };
      totals.set(event.organizationId, { creditsDelta, callsDelta, creditsUsedDelta, newestEventAt: event.occurredAt, before, after: before });
    }
  }
  return { ledger, totals };
}

// applied_at is the wall clock of the insert (not the batch's start): end-to-end lag reads it.
async function insertLedger(trx: Knex.Transaction, ledger: LedgerRow[]): Promise<number> {
  const inserted = await trx.raw<{ rowCount: number }>(
    `INSERT INTO usage_ledger (event_id, organization_id, entry_type, source, key_id, product, quantity, unit,
                               credits_delta, calls_delta, credits_balance_after, period, occurred_at, applied_at)
     SELECT e.event_id, e.organization_id, 'usage', e.source, e.key_id, e.product, e.quantity, e.unit,
            e.credits_delta, e.calls_delta, e.balance_after, e.period, e.occurred_at, clock_timestamp()
       FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[],
                   ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::timestamptz[])
         AS e(event_id, organization_id, source, key_id, product, quantity, unit,
              credits_delta, calls_delta, balance_after, period, occurred_at)
     ON CONFLICT (event_id) DO NOTHING`,
    [
      ledger.map((l) => l.event.eventId),
      ledger.map((l) => l.event.organizationId),
      ledger.map((l) => l.event.source),
      ledger.map((l) => l.event.keyId),
      ledger.map((l) => l.event.product),
      ledger.map((l) => l.event.quantity),
      ledger.map((l) => l.event.unit),
      ledger.map((l) => l.creditsDelta),
      ledger.map((l) => l.callsDelta),
      ledger.map((l) => l.balanceAfter),
      ledger.map((l) => l.period),
      ledger.map((l) => l.event.occurredAt),
    ],
  );
  return inserted.rowCount;
}
