import { effectiveProducts, OVERRIDES_JSON, PLAN_PRODUCTS_JSON, type PlanProduct, type ProductOverride } from '../billing/plans/effective-products.js';
import { likeEscape, pageWindow, type Db } from '../db/index.js';
import { coverageOf, someProductsRefusedSql } from './credits-coverage.js';

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
  /**
   * The balance is below the price of some of the organization's credits-priced products, the
   * flag down (it is raised only when not even the cheapest is paid): the API refuses those
   * calls with 402, so the row is not "OK" (coverageOf, as the Overview and operator page say).
   */
  someProductsRefused: boolean;
  members: number;
  activeKeys: number;
  lastEventAt: Date | null;
}

export interface OrganizationsOverview {
  /** One page of organizations, by name. */
  rows: OrganizationOverviewRow[];
  page: number;
  pages: number;
  /** Organizations matching the search. */
  total: number;
  /**
   * Over every organization, not just the page or the search: `flagged`, those with credits
   * exhausted or the calls cap reached; `someProductsRefused`, those whose balance pays for some
   * of their products only; `unprovisioned`, those with no plan (every call refused with 403
   * client_not_configured); `notActive`, those with any of these, whose row does not say "Active".
   */
  totals: { organizations: number; flagged: number; someProductsRefused: number; unprovisioned: number; notActive: number; creditsBalance: number; newestEventAt: Date | null };
}

export interface OrganizationsOverviewOptions {
  /** Part of the name or id, case-insensitive. */
  search?: string | null;
  page?: number;
  pageSize?: number;
}

/**
 * The operators' front page: organizations with their balance and flags (and whether the balance
 * pays for only some of their products), a page at a time (a
 * customer base grows; each row also counts members and keys), optionally those whose name or
 * id contains `search`; and the totals over every organization, from one aggregate.
 */
export async function organizationsOverview(db: Db, options: OrganizationsOverviewOptions = {}): Promise<OrganizationsOverview> {
  const pageSize = options.pageSize ?? 50;
  const search = options.search?.trim() ?? '';
  const matching = () => {
    const q = db('organizations as o');
    // The pattern's own wildcards are escaped: the search is for the text as typed.
    if (search !== '') q.where((w) => void w.whereILike('o.name', `%${likeEscape(search)}%`).orWhereILike('o.id', `%${likeEscape(search)}%`));
    return q;
  };
  const refused = someProductsRefusedSql('a.credits_balance');
  const [counted, totals] = await Promise.all([
    matching().count<{ n: string | number }>({ n: '*' }).first(),
    // Each organization's products are asked in SQL (someProductsRefusedSql), as its row asks
    // coverageOf: the count agrees with the rows without reading every organization's products.
    db.from(db.raw(`(SELECT a.credits_balance, a.last_event_at, o.plan_id IS NULL AS unprovisioned,
                            COALESCE(a.credits_exhausted OR a.limit_reached, false) AS flagged,
                            COALESCE(NOT a.credits_exhausted AND ${refused.sql}, false) AS some_refused
                       FROM organizations o LEFT JOIN allowances a ON a.organization_id = o.id) AS t`, refused.bindings))
      .first<{ organizations: string | number; flagged: string | number; some_refused: string | number; unprovisioned: string | number; not_active: string | number; balance: string | number | null; newest: Date | null }>(
        db.raw('COUNT(*) AS organizations'),
        db.raw('COUNT(*) FILTER (WHERE flagged) AS flagged'),
        db.raw('COUNT(*) FILTER (WHERE some_refused) AS some_refused'),
        db.raw('COUNT(*) FILTER (WHERE unprovisioned) AS unprovisioned'),
        db.raw('COUNT(*) FILTER (WHERE flagged OR some_refused OR unprovisioned) AS not_active'),
        db.raw('SUM(credits_balance)::bigint AS balance'),
        db.raw('MAX(last_event_at) AS newest'),
      ),
  ]);
  const total = Number(counted?.n ?? 0);
  const { page, pages, offset } = pageWindow(total, options.page, pageSize);
  const rows = await matching()
    .leftJoin('plans as p', 'p.id', 'o.plan_id')
    .leftJoin('allowances as a', 'a.organization_id', 'o.id')
    .orderBy([{ column: 'o.name' }, { column: 'o.id' }])
    .offset(offset)
    .limit(pageSize)
    .select<Record<string, any>[]>(
      'o.id', 'o.name', 'o.plan_id', 'p.name as plan_name', 'o.status', 'a.period', 'a.credits_balance', 'a.calls_used', 'a.calls_cap',
      'a.credits_exhausted', 'a.limit_reached', 'a.last_event_at',
      db.raw('(SELECT COUNT(*) FROM memberships m WHERE m.organization_id = o.id)::int AS members'),
      db.raw(`(SELECT COUNT(*) FROM api_keys k WHERE k.organization_id = o.id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()))::int AS active_keys`),
      // Each row's products, in this statement: the page's coverage costs no query per row.
      db.raw(`${PLAN_PRODUCTS_JSON} AS plan_products`),
      db.raw(`${OVERRIDES_JSON} AS overrides`),
    );
  return {
    page,
    pages,
    total,
    totals: {
      organizations: Number(totals?.organizations ?? 0),
      flagged: Number(totals?.flagged ?? 0),
      someProductsRefused: Number(totals?.some_refused ?? 0),
      unprovisioned: Number(totals?.unprovisioned ?? 0),
      notActive: Number(totals?.not_active ?? 0),
      creditsBalance: Number(totals?.balance ?? 0),
      newestEventAt: totals?.newest ?? null,
    },
    rows: rows.map((r) => ({
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
      someProductsRefused: r.credits_balance !== null && !r.credits_exhausted
        && coverageOf(effectiveProducts(r.plan_products as PlanProduct[], r.overrides as ProductOverride[]), Number(r.credits_balance)).refused.length > 0,
      members: r.members,
      activeKeys: r.active_keys,
      lastEventAt: r.last_event_at,
    })),
  };
}
