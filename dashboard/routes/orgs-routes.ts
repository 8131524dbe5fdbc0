import type { Router } from '@koa/router';
import { membershipsOf } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import type { DashboardState } from '../state.js';
import { badge } from '../views/components.js';
import { html } from '../views/html.js';
import { page } from '../views/layout.js';

export function registerOrgsRoutes(router: Router<DashboardState>, deps: { db: Db }): void {
  router.get('/orgs', async (ctx) => {
    const { t } = ctx.state;
    const memberships = await membershipsOf(deps.db, ctx.state.session!.user.id);
    const body = memberships.length === 0
      ? html`<p class="empty">${t('orgs.none')}</p>`
      : html`<ul class="org-list">${memberships.map((m) => html`<li class="card"><a href="/orgs/${m.organizationId}"><strong>${m.organizationName}</strong></a> ${badge(t(`role.${m.role}`), 'info')}</li>`)}</ul>`;
    ctx.body = page(ctx.state, { title: t('orgs.title'), body, active: 'orgs', memberships, path: ctx.url });
  });
}
