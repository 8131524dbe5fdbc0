import type { OrganizationRefusal } from '../org-access.js';
import type { DashboardState } from '../state.js';
import { badge, notice } from './components.js';
import { html } from './html.js';
import { orgPages, page } from './layout.js';

/**
 * The gate's 403 for someone who has, or had, a role in the organization (dashboard/org-access.ts):
 * an admin made finance, or removed, while signed in learns that at their next request, and
 * where they can still go, instead of a bare "not allowed".
 */
export function organizationRefusalPage(state: DashboardState, refusal: OrganizationRefusal, path: string): string {
  const { t, f } = state;
  if (refusal.kind === 'role') {
    const { org } = refusal;
    const role = t(`role.${org.role}`);
    const said = refusal.changedAt
      ? t('refusal.roleChanged', { org: org.name, role, date: f.dateTime(refusal.changedAt) })
      : t('refusal.role', { org: org.name, role });
    const body = html`${notice(said, 'warn')}
      <p>${t('refusal.rolePages', { role })}</p>
      <ul>${orgPages(state, org).map((p) => html`<li><a href="${p.href}">${p.label}</a></li>`)}</ul>`;
    return page(state, { title: t('refusal.roleTitle'), body, org, memberships: refusal.memberships, path });
  }
  const others = refusal.memberships;
  const body = html`${notice(t('refusal.removed', { date: f.dateTime(refusal.removedAt) }), 'warn')}
    ${others.length > 0
      ? html`<p>${t('refusal.yourOrganizations')}</p>
        <ul class="org-list">${others.map((m) => html`<li class="card"><a href="/orgs/${m.organizationId}"><strong>${m.organizationName}</strong></a> ${badge(t(`role.${m.role}`), 'info')}</li>`)}</ul>`
      : ''}
    <p>${t('refusal.rejoin')}</p>`;
  return page(state, { title: t('refusal.removedTitle'), body, memberships: others, path });
}
