import type { Db } from '../db/index.js';
import { newId } from '../ids/index.js';
import { percentUsed } from '../finance/allowance-glance.js';
import type { ThresholdKind } from './alert-settings.js';
import { clearedByMargin } from './rearm-margin.js';

export const THRESHOLD_EVENT = 'allowance.threshold_crossed';

export interface ThresholdPayload {
  id: string;
  type: typeof THRESHOLD_EVENT;
  createdAt: string;
  organizationId: string;
  period: string;
  threshold: { id: string; kind: ThresholdKind; value: number };
  allowance: { creditsBalance: number; creditsUsed: number; callsUsed: number; callsCap: number | null; percentUsed: number | null };
}

export interface EvaluationOutcome {
  fired: { thresholdId: string; organizationId: string; deliveryId: string | null }[];
  rearmed: string[];
}

interface Candidate {
  id: string;
  organization_id: string;
  kind: ThresholdKind;
  value: number;
  fired_period: string | null;
  period: string;
  credits_balance: number;
  calls_used: number;
  calls_cap: number | null;
  credits_used: number;
  webhook_url: string | null;
}

/**
 * One pass over every threshold. A threshold fires once per crossing: the conditional UPDATE
 * (fired_period IS DISTINCT FROM the period) lets exactly one evaluator win even with several
 * dashboard processes running, and it stays fired while its condition holds, and after, until
 * a pass finds the condition cleared by the re-arm margin (rearm-margin.ts), whatever changed
 * the allowance: a calls cap raised or removed, credits put in (a grant, a top-up, a positive
 * adjustment, a refund), calls given back. Usage alone only ever moves use up (percent used,
 * whether of credits or of the cap, rises and the balance falls), so a fired condition clears
 * only through such a change, and the threshold fires again only after a pass saw it cleared: a
 * new crossing, never the same one twice, nor a refund given back and charged again. A new
 * period re-arms it by itself, margin or not, since fired_period no longer matches.
 */
export async function evaluateThresholds(db: Db, now = new Date()): Promise<EvaluationOutcome> {
  // Until 27 Nov 2026 only money put in after the firing re-armed a threshold: one fired by the
  // calls cap stayed fired when the cap was raised, and never alerted again that month.
  const { rows } = await db.raw<{ rows: Candidate[] }>(`
    SELECT t.id, t.organization_id, t.kind, t.value, t.fired_period,
           a.period, a.credits_balance, a.calls_used, a.calls_cap, s.webhook_url,
           a.credits_used
      FROM alert_thresholds t
      JOIN allowances a ON a.organization_id = t.organization_id
      LEFT JOIN alert_settings s ON s.organization_id = t.organization_id`);
  const outcome: EvaluationOutcome = { fired: [], rearmed: [] };
  for (const c of rows) {
    const figures = { creditsUsed: c.credits_used, creditsBalance: c.credits_balance, callsUsed: c.calls_used, callsCap: c.calls_cap };
    const percent = percentUsed(figures);
    const met = c.kind === 'percent_used' ? percent !== null && percent >= c.value : c.credits_balance < c.value;
    const firedThisPeriod = c.fired_period === c.period;
    // Until 27 Nov 2026 any pass that found the condition not holding re-armed it: an 80 %
    // threshold at 79.99 % after a refund fired again at the next charged call.
    if (firedThisPeriod && clearedByMargin(c.kind, c.value, figures)) {
      const n = await db('alert_thresholds').where({ id: c.id, fired_period: c.period }).update({ fired_period: null });
      if (n > 0) outcome.rearmed.push(c.id);
      continue;
    }
    if (firedThisPeriod || !met) continue;
    const fired = await db.transaction(async (trx) => {
      const won = await trx('alert_thresholds')
        .where({ id: c.id })
        .andWhereRaw('fired_period IS DISTINCT FROM ?', [c.period])
        .update({ fired_period: c.period, fired_at: now });
      if (won === 0) return null;
      if (!c.webhook_url) return { deliveryId: null };
      const deliveryId = newId('whd');
      const payload: ThresholdPayload = {
        id: deliveryId,
        type: THRESHOLD_EVENT,
        createdAt: now.toISOString(),
        organizationId: c.organization_id,
        period: c.period,
        threshold: { id: c.id, kind: c.kind, value: c.value },
        allowance: { creditsBalance: c.credits_balance, creditsUsed: c.credits_used, callsUsed: c.calls_used, callsCap: c.calls_cap, percentUsed: percent },
      };
      await trx('webhook_deliveries').insert({
        id: deliveryId,
        organization_id: c.organization_id,
        threshold_id: c.id,
        event_type: THRESHOLD_EVENT,
        payload: JSON.stringify(payload),
        status: 'pending',
        next_attempt_at: now,
        created_at: now,
      });
      return { deliveryId };
    });
    if (fired) outcome.fired.push({ thresholdId: c.id, organizationId: c.organization_id, deliveryId: fired.deliveryId });
  }
  return outcome;
}

/** Thresholds that fired in the organization's current period: the dashboard's banner. */
export async function firedThresholds(db: Db, organizationId: string): Promise<{ id: string; kind: ThresholdKind; value: number; firedAt: Date }[]> {
  const rows = await db('alert_thresholds as t')
    .join('allowances as a', 'a.organization_id', 't.organization_id')
    .where('t.organization_id', organizationId)
    .andWhereRaw('t.fired_period = a.period')
    .orderBy('t.fired_at', 'desc')
    .select<{ id: string; kind: ThresholdKind; value: number; fired_at: Date }[]>('t.id', 't.kind', 't.value', 't.fired_at');
  return rows.map((r) => ({ id: r.id, kind: r.kind, value: r.value, firedAt: r.fired_at }));
}
