import { firedThresholds } from '../core/alerts/index.js';
import { can, lastMembershipEvent, membershipsOf, roleIn, type Capability, type MembershipSummary, type OrganizationRole } from '../core/dashboard-auth/index.js';
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

/** What the gate tells a person it turns away who has, or had, a role in the organization. */
export type OrganizationRefusal =
  /** Their role lacks the page's capability; `changedAt` when the log says it was changed to it. */
  | { kind: 'role'; org: OrgView['org']; memberships: MembershipSummary[]; changedAt?: Date }
  /** No longer a member: the log says they were removed (the organization is one they knew). */
  | { kind: 'removed'; removedAt: Date; memberships: MembershipSummary[] };

/** The gate's 403 for a member or a former one: the error page draws `refusal` (views/organization-refusal.ts). */
export class OrganizationRefused extends Error {
  readonly status = 403;
  readonly expose = true;
  constructor(readonly refusal: OrganizationRefusal) {
    super('forbidden');
  }
}

/**
 * The gate of every organization page and action, reading the role at every request. Someone
 * with no role in the organization gets the same 404 as for one that does not exist, so URLs
 * reveal nothing; unless the audit log says they were removed from it (an organization they
 * knew): their 403 says they are no longer a member. A member whose role lacks the capability
 * gets a 403 naming that role (and when it was given, if by a role change) and the pages it
 * opens. So an admin made finance, or removed, while signed in is told so at their next
 * request rather than refused without a reason.
 */
export async function orgAccess(ctx: DashboardContext, db: Db, organizationId: string, capability: Capability): Promise<OrgView> {
  const user = ctx.state.session!.user;
  const role = await roleIn(db, user, organizationId);
  if (!role) {
    const last = user.isOperator ? undefined : await lastMembershipEvent(db, organizationId, user.id);
    if (last?.action === 'member.removed') throw new OrganizationRefused({ kind: 'removed', removedAt: last.at, memberships: await membershipsOf(db, user.id) });
    throw new AppError('not_found', 'No such organization.');
  }
  if (!can(role, capability)) {
    const [org, memberships, last] = await Promise.all([
      db('organizations').where({ id: organizationId }).first<{ name: string }>('name'),
      membershipsOf(db, user.id),
      role === 'operator' ? undefined : lastMembershipEvent(db, organizationId, user.id),
    ]);
    const changedAt = last?.action === 'member.role_changed' && last.role === role ? last.at : undefined;
    throw new OrganizationRefused({ kind: 'role', org: { id: organizationId, name: org.name, role }, memberships, ...(changedAt ? { changedAt } : {}) });
  }
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
