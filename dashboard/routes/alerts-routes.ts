import type { Router } from '@koa/router';
import { addThreshold, alertSettings, deliveriesPage, listThresholds, removeThreshold, rotateWebhookSecret, setWebhookUrl, thresholdKinds, type ThresholdKind } from '../../core/alerts/index.js';
import { can, withAudit } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { AppError } from '../../core/errors/index.js';
import { claimSubmission, submissionField } from '../form-submission.js';
import { orgAccess, type OrgView } from '../org-access.js';
import type { DashboardContext, DashboardState } from '../state.js';
import { badge, copyButton, csrfField, field, notice, postButton, section, select, table } from '../views/components.js';
import { deliveryError } from '../views/delivery-errors.js';
import { html, type HtmlValue } from '../views/html.js';
import { fieldRefusals, invalidInputMessage } from '../views/invalid-input.js';
import { page } from '../views/layout.js';
import { cursorPager, rowPagerPosition, rowPagerQuery } from '../views/row-pager.js';

export interface AlertsRouteDeps {
  db: Db;
  allowPrivateWebhookTargets: boolean;
}

/** A refused form, shown again: what was typed, and why each field was refused. */
interface Refused {
  typed: Partial<Record<string, string>>;
  error: AppError;
}

/** The alerts page: finance sees thresholds and the delivery log; only admins (and operators) get the forms. */
async function renderAlerts(ctx: DashboardContext, db: Db, view: OrgView, options: { top?: HtmlValue; refused?: Refused } = {}): Promise<void> {
  const { t, f } = ctx.state;
  const manage = can(view.org.role, 'manage_alerts');
  const [settings, thresholds, deliveries] = await Promise.all([alertSettings(db, view.org.id), listThresholds(db, view.org.id), deliveriesPage(db, view.org.id, rowPagerPosition(ctx.query))]);
  const currentPeriod = (await db('allowances').where({ organization_id: view.org.id }).first<{ period: string } | undefined>('period'))?.period;
  const typed = options.refused?.typed ?? {};
  const refusals = options.refused ? fieldRefusals(ctx.state, options.refused.error) : {};
  // The threshold's value is a text field, as the operator's number fields are (docs/dashboard.md):
  // Chromium's number field dropped the comma of an Italian "7,5" and sent 75; core refuses
  // whatever is not digits, and says so.
  const body = html`
      ${options.top ?? ''}
      ${options.refused ? notice(t('error.invalid', { message: invalidInputMessage(ctx.state, options.refused.error) }), 'bad') : ''}
      <p class="lead">${t('alerts.intro')}</p>
      ${section(t('alerts.webhook'), html`
        ${settings.webhookUrl ? '' : html`<p class="muted">${t('alerts.noWebhook')}</p>`}
        ${manage ? html`<form method="post" action="/orgs/${view.org.id}/alerts/webhook" class="form-row">
          ${csrfField(ctx.state)}
          ${field({ label: t('alerts.webhookUrl'), name: 'webhookUrl', type: 'url', value: typed.webhookUrl ?? settings.webhookUrl ?? '', help: t('alerts.webhookHelp'), placeholder: 'https://example.com/hooks/allowance', id: 'webhook-url', error: refusals.webhookUrl })}
          <div class="field field-button"><button class="btn btn-primary" type="submit">${t('common.save')}</button></div>
        </form>
        <details class="secret-box"><summary>${t('alerts.reveal')}</summary>
          <div class="secret-row"><code id="webhook-secret" class="secret" tabindex="0">${settings.webhookSecret}</code>
          ${copyButton(ctx.state, 'webhook-secret', { tone: 'secondary' })}
          ${postButton(ctx.state, `/orgs/${view.org.id}/alerts/secret`, t('alerts.rotateSecret'), { tone: 'secondary', confirm: t('alerts.rotateSecretConfirm') })}</div>
          <p class="muted small">${t('alerts.verifyHelp')}</p>
        </details>` : html`<p>${settings.webhookUrl ? webhookSite(settings.webhookUrl) : '—'}</p>`}`, { id: 'alerts-webhook' })}
      ${section(t('alerts.thresholds'), html`
        ${table({
          caption: t('alerts.thresholds'),
          headers: [t('alerts.kind'), t('alerts.value'), t('common.status'), manage ? t('common.actions') : ''],
          rows: thresholds.map((x) => {
            const value = x.kind === 'percent_used' ? `${x.value}%` : f.number(x.value);
            return [
              t(`alerts.condition.${x.kind}`),
              value,
              x.firedPeriod && x.firedPeriod === currentPeriod && x.firedAt ? badge(t('alerts.fired', { time: f.dateTime(x.firedAt) }), 'warn') : badge(t('alerts.armed'), 'good'),
              manage ? postButton(ctx.state, `/orgs/${view.org.id}/alerts/thresholds/${x.id}/delete`, t('common.remove'), { tone: 'danger', confirm: t('alerts.removeThresholdConfirm', { threshold: t(`alerts.threshold.${x.kind}`, { value: f.number(x.value) }) }) }) : '',
            ];
          }),
          empty: t('common.noRows'),
        })}
        ${manage ? html`<form method="post" action="/orgs/${view.org.id}/alerts/thresholds" class="form-row">
          ${csrfField(ctx.state)}${submissionField()}
          ${select({ label: t('alerts.kind'), name: 'kind', choices: thresholdKinds.map((k) => ({ value: k, label: t(`alerts.kind.${k}`) })), value: typed.kind ?? 'percent_used', id: 'threshold-kind' })}
          ${field({ label: t('alerts.value'), name: 'value', inputmode: 'numeric', required: true, value: typed.value ?? null, id: 'threshold-value', error: refusals.value })}
          <div class="field field-button"><button class="btn btn-primary" type="submit">${t('alerts.add')}</button></div>
        </form>` : ''}`, { id: 'alerts-thresholds' })}
      ${section(t('alerts.deliveries'), html`${table({
        caption: t('alerts.deliveries'),
        headers: [t('common.created'), t('report.type'), t('common.status'), t('alerts.attempts'), t('alerts.response'), t('alerts.nextAttempt')],
        rows: deliveries.rows.map((d) => [
          f.dateTime(d.createdAt),
          html`<code>${d.eventType}</code><div class="muted small">${d.id}</div>`,
          badge(t(`alerts.delivery.status.${d.status}`), d.status === 'delivered' ? 'good' : d.status === 'failed' ? 'bad' : 'warn'),
          String(d.attempts),
          d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : d.lastError === null ? '—' : deliveryError(ctx.state, d.lastError),
          d.nextAttemptAt && d.status === 'pending' ? f.dateTime(d.nextAttemptAt) : '—',
        ]),
        numeric: [3],
        empty: t('common.noRows'),
      })}
      ${deliveries.pages > 1 ? cursorPager(ctx.state, deliveries, (to) => `/orgs/${view.org.id}/alerts?${new URLSearchParams(rowPagerQuery(to)).toString()}#alerts-deliveries`, 'deliveries') : ''}`, { id: 'alerts-deliveries' })}`;
  ctx.body = page(ctx.state, { title: t('alerts.title'), body, org: view.org, active: 'alerts', memberships: view.memberships, banners: view.banners, path: `/orgs/${view.org.id}/alerts` });
}

/**
 * The webhook address as a reader who may not manage alerts sees it (finance): where it goes,
 * not the path, query or user info, which for many receivers (chat incoming webhooks, basic
 * auth in the URL) are the secret that lets anyone post to it.
 */
function webhookSite(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return '…';
  }
}

export function registerAlertsRoutes(router: Router<DashboardState>, deps: AlertsRouteDeps): void {
  const { db } = deps;

  router.get('/orgs/:orgId/alerts', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'view_finance');
    await renderAlerts(ctx, db, view, { top: ctx.query.done === 'saved' ? notice(ctx.state.t('alerts.saved'), 'good') : undefined });
  });

  // A saved change redirects (a reload does not send it again); a refused one answers with the
  // form as typed and why, as the other forms do.
  const afterChange = (orgId: string) => `/orgs/${orgId}/alerts?done=saved`;
  const refuse = async (ctx: DashboardContext, view: OrgView, err: unknown, fields: string[]) => {
    if (!(err instanceof AppError && err.code === 'invalid_params')) throw err;
    ctx.status = 422;
    const typed = Object.fromEntries(fields.map((name) => [name, ctx.state.form[name]]));
    await renderAlerts(ctx, db, view, { refused: { typed, error: err } });
  };

  router.post('/orgs/:orgId/alerts/webhook', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_alerts');
    try {
      await withAudit(
        db,
        (trx) => setWebhookUrl(trx, view.org.id, ctx.state.form.webhookUrl ?? null, { allowPrivateTargets: deps.allowPrivateWebhookTargets }),
        (saved) => (saved.changed ? { organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'alerts.webhook_set' } : null),
      );
    } catch (err) {
      return refuse(ctx, view, err, ['webhookUrl']);
    }
    ctx.redirect(afterChange(view.org.id));
  });

  router.post('/orgs/:orgId/alerts/secret', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_alerts');
    await withAudit(
      db,
      (trx) => rotateWebhookSecret(trx, view.org.id),
      () => ({ organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'alerts.secret_rotated' }),
    );
    ctx.redirect(afterChange(view.org.id));
  });

  router.post('/orgs/:orgId/alerts/thresholds', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_alerts');
    const kind = ctx.state.form.kind as ThresholdKind;
    try {
      // Sent before (a double-click): answered as the first was, not refused as "already set",
      // which is what the browser, following the last answer, would have shown.
      await withAudit(
        db,
        async (trx) => (await claimSubmission(trx, ctx)) ? addThreshold(trx, view.org.id, { kind, value: ctx.state.form.value ?? '' }) : null,
        // The value saved, not the text typed.
        (threshold) => threshold && { organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'alerts.threshold_added', details: { kind, value: threshold.value } },
      );
    } catch (err) {
      return refuse(ctx, view, err, ['kind', 'value']);
    }
    ctx.redirect(afterChange(view.org.id));
  });

  router.post('/orgs/:orgId/alerts/thresholds/:id/delete', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_alerts');
    await withAudit(
      db,
      async (trx) => {
        if (!(await removeThreshold(trx, view.org.id, ctx.params.id!))) throw new AppError('not_found', 'No such threshold.');
      },
      () => ({ organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'alerts.threshold_removed', details: { thresholdId: ctx.params.id } }),
    );
    ctx.redirect(afterChange(view.org.id));
  });
}
