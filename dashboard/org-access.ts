import { firedThresholds } from '../core/alerts/index.js';
import { can, membershipsOf, roleIn, type Capability, type MembershipSummary, type OrganizationRole } from '../core/dashboard-auth/index.js';
import type { Db } from '../core/db/index.js';
import { AppError } from '../core/errors/index.js';
import type { DashboardContext } from './state.js';
import { notice } from './views/components.js';
import { html, type Html } from './views/html.js';

export interface OrgView {
  org: { id: string; name: string; role: OrganizationRole };
  memberships: MembershipSummary[];
  banners: Html;
}

/**
 * The gate of every organization page and action. Someone with no role in the organization
 * gets the same 404 as for an organization that does not exist, so URLs reveal nothing; a
 * member whose role lacks the capability gets 403.
 */
export async function orgAccess(ctx: DashboardContext, db: Db, organizationId: string, capability: Capability): Promise<OrgView> {
  const user = ctx.state.session!.user;
  const role = await roleIn(db, user, organizationId);
  if (!role) throw new AppError('not_found', 'No such organization.');
  if (!can(role, capability)) ctx.throw(403, 'forbidden');
  const [org, memberships, fired, allowance] = await Promise.all([
    db('organizations').where({ id: organizationId }).first<{ name: string }>('name'),
    membershipsOf(db, user.id),
    firedThresholds(db, organizationId),
    db('allowances').where({ organization_id: organizationId }).first<{ credits_exhausted: boolean; limit_reached: boolean } | undefined>('credits_exhausted', 'limit_reached'),
  ]);
  const { t, f } = ctx.state;
  const banners = html`
    ${allowance?.credits_exhausted ? notice(t('banner.credits_exhausted'), 'bad') : ''}
    ${allowance?.limit_reached ? notice(t('banner.limit_reached'), 'bad') : ''}
    ${fired.map((x) => notice(t(`banner.threshold.${x.kind}`, { value: f.number(x.value) }), 'warn'))}`;
  return { org: { id: organizationId, name: org.name, role }, memberships, banners };
}
