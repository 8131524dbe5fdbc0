import type { Db } from '../db/index.js';

export interface OrganizationOverviewRow {
  id: string;
  name: string;
  planId: string | null;
  planName: string | null;
  status: string;
  period: string | null;
  creditsBalance: number | null;
  callsUsed: number | null;
  callsCap: number | null;
  creditsExhausted: boolean;
  limitReached: boolean;
  members: number;
  activeKeys: number;
  lastEventAt: Date | null;
}

/** Every organization with its balance and flags: the operators' front page. */
export async function organizationsOverview(db: Db): Promise<OrganizationOverviewRow[]> {
  const rows = await db('organizations as o')
    .leftJoin('plans as p', 'p.id', 'o.plan_id')
    .leftJoin('allowances as a', 'a.organization_id', 'o.id')
    .orderBy([{ column: 'o.name' }, { column: 'o.id' }])
    .select<Record<string, any>[]>(
      'o.id', 'o.name', 'o.plan_id', 'p.name as plan_name', 'o.status', 'a.period', 'a.credits_balance', 'a.calls_used', 'a.calls_cap',
      'a.credits_exhausted', 'a.limit_reached', 'a.last_event_at',
      db.raw('(SELECT COUNT(*) FROM memberships m WHERE m.organization_id = o.id)::int AS members'),
      db.raw(`(SELECT COUNT(*) FROM api_keys k WHERE k.organization_id = o.id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()))::int AS active_keys`),
    );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    planId: r.plan_id,
    planName: r.plan_name,
    status: r.status,
    period: r.period,
    creditsBalance: r.credits_balance,
    callsUsed: r.calls_used,
    callsCap: r.calls_cap,
    creditsExhausted: Boolean(r.credits_exhausted),
    limitReached: Boolean(r.limit_reached),
    members: r.members,
    activeKeys: r.active_keys,
    lastEventAt: r.last_event_at,
  }));
}
