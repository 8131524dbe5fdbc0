import type { Router } from '@koa/router';
import { auditPage } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { orgAccess } from '../org-access.js';
import type { DashboardState } from '../state.js';
import { auditActor, describeAuditAction } from '../views/audit-entries.js';
import { pagination, section, table } from '../views/components.js';
import { html } from '../views/html.js';
import { page } from '../views/layout.js';

// The organization's audit log for its admins: who created, rotated or revoked which key, who
// invited or removed whom, who changed the alerts, and what our operators changed. 50 a page.
export function registerActivityRoutes(router: Router<DashboardState>, deps: { db: Db }): void {
  router.get('/orgs/:orgId/activity', async (ctx) => {
    const view = await orgAccess(ctx, deps.db, ctx.params.orgId!, 'view_activity');
    const { t, f } = ctx.state;
    const result = await auditPage(deps.db, view.org.id, { page: Number.parseInt(String(ctx.query.page ?? '1'), 10) });
    const link = (p: number) => `/orgs/${view.org.id}/activity?page=${p}`;
    const body = html`
      <p class="lead">${t('activity.intro')}</p>
      ${section(t('activity.title'), html`${table({
        caption: t('activity.title'),
        headers: [t('report.at'), t('activity.who'), t('activity.what')],
        rows: result.rows.map((row) => [f.dateTime(row.at), auditActor(ctx.state, row), describeAuditAction(ctx.state, row)]),
        empty: t('common.noRows'),
      })}
      ${pagination(ctx.state, result, link)}`, { id: 'activity-table' })}`;
    ctx.body = page(ctx.state, { title: t('activity.title'), body, org: view.org, active: 'activity', memberships: view.memberships, banners: view.banners, path: ctx.url });
  });
}
