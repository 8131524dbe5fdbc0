import type { Router } from '@koa/router';
import { auditKinds, auditPage, isAuditKind, type AuditKind } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { orgAccess } from '../org-access.js';
import type { DashboardState } from '../state.js';
import { auditActor, describeAuditAction } from '../views/audit-entries.js';
import { section, table } from '../views/components.js';
import { html, type Html } from '../views/html.js';
import { page } from '../views/layout.js';
import { cursorPager, rowPagerPosition, rowPagerQuery, type RowPagerTarget } from '../views/row-pager.js';

// The organization's audit log for its admins: who created, rotated or revoked which key, who
// invited or removed whom, who changed the alerts, and what our operators changed. 50 a page.
export function registerActivityRoutes(router: Router<DashboardState>, deps: { db: Db }): void {
  router.get('/orgs/:orgId/activity', async (ctx) => {
    const view = await orgAccess(ctx, deps.db, ctx.params.orgId!, 'view_activity');
    const { t, f } = ctx.state;
    // An unknown ?kind= (an old bookmark, a typo) shows every change, the tab that says so current.
    const kind = isAuditKind(ctx.query.kind) ? ctx.query.kind : undefined;
    // Previous and Next by row (`?older=` / `?newer=`, the row's id): a change made meanwhile shifts no page.
    const result = await auditPage(deps.db, view.org.id, { kind, ...rowPagerPosition(ctx.query) });
    const link = (to: RowPagerTarget) => activityPath(view.org.id, kind, rowPagerQuery(to));
    const body = html`
      <p class="lead">${t('activity.intro')}</p>
      ${section(t('activity.title'), html`${table({
        caption: t('activity.title'),
        headers: [t('report.at'), t('activity.who'), t('activity.what')],
        rows: result.rows.map((row) => [f.dateTime(row.at), auditActor(ctx.state, row), describeAuditAction(ctx.state, row)]),
        empty: t('common.noRows'),
      })}
      ${cursorPager(ctx.state, result, link, 'rows')}`, { id: 'activity-table', actions: kindTabs(ctx.state, view.org.id, kind) })}`;
    ctx.body = page(ctx.state, { title: t('activity.title'), body, org: view.org, active: 'activity', memberships: view.memberships, banners: view.banners, path: ctx.url });
  });
}

/** The page of one kind of change (all of them: no kind) at a position: `?kind=…&page=…` (or `older=`, `newer=`), which the pager's links keep. */
const activityPath = (orgId: string, kind: AuditKind | undefined, position: Record<string, string> = {}) => {
  const query = new URLSearchParams({ ...(kind ? { kind } : {}), ...position }).toString();
  return `/orgs/${orgId}/activity${query ? `?${query}` : ''}`;
};

/** All / Keys / Members / Credits and caps / Plan and settings / Alerts / Usage; a kind starts at its first page. */
function kindTabs(state: DashboardState, orgId: string, current: AuditKind | undefined): Html {
  const { t } = state;
  const kinds = [undefined, ...Object.keys(auditKinds) as AuditKind[]];
  return html`<nav class="tabs" aria-label="${t('activity.filter')}">${kinds.map((k) => html`<a class="tab" href="${activityPath(orgId, k)}"${k === current ? html` aria-current="page"` : ''}>${t(`activity.kind.${k ?? 'all'}`)}</a>`)}</nav>`;
}
