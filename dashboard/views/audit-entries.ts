import type { AuditRow } from '../../core/dashboard-auth/index.js';
import type { MessageKey } from '../i18n/translate.js';
import type { DashboardState } from '../state.js';
import { html, type HtmlValue } from './html.js';

// Audit rows as people read them, in the dashboard's language: what was done, with the values
// it was done with. The actions are those the dashboard's handlers and the operator CLI record
// (withAudit); a row with an action not listed here (written by a newer version, say) shows its
// code.
const describedActions = new Set([
  'key.created', 'key.revoked', 'key.rotated',
  'member.invited', 'member.joined', 'member.removed',
  'alerts.webhook_set', 'alerts.secret_rotated', 'alerts.threshold_added', 'alerts.threshold_removed',
  'organization.created', 'organization.plan_set', 'organization.period_set', 'organization.limits_set', 'organization.product_set', 'organization.product_reset',
  'credits.grant', 'credits.top_up', 'credits.adjustment', 'allowance.cap_set',
]);

export function describeAuditAction(state: DashboardState, row: Pick<AuditRow, 'action' | 'details'>): HtmlValue {
  if (!describedActions.has(row.action)) return html`<code>${row.action}</code>`;
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(row.details ?? {})) {
    if (value === null || value === undefined || value === '') params[name] = '—';
    else if (typeof value === 'number') params[name] = state.f.number(value);
    else if (name === 'role' && (value === 'admin' || value === 'finance')) params[name] = state.t(`role.${value}`);
    else params[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  // A value the row lacks reads as "—", not as a {placeholder}.
  return state.t(`activity.${row.action}` as MessageKey, params).replace(/\{\w+\}/g, '—');
}

/** Who did it: the person's e-mail when they have an account, else the recorded actor. */
export function auditActor(state: DashboardState, row: Pick<AuditRow, 'actor' | 'actorEmail'>): string {
  if (row.actorEmail) return row.actorEmail;
  return row.actor === 'system' ? state.t('activity.system') : row.actor;
}
