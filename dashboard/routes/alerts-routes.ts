import type { Router } from '@koa/router';
import { addThreshold, alertSettings, listDeliveries, listThresholds, PRIVATE_WEBHOOK_TARGET, removeThreshold, rotateWebhookSecret, setWebhookUrl, THRESHOLD_ALREADY_SET, thresholdKinds, type ThresholdKind } from '../../core/alerts/index.js';
import { can, withAudit } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { AppError } from '../../core/errors/index.js';
import { orgAccess } from '../org-access.js';
import type { MessageKey } from '../i18n/translate.js';
import type { DashboardState } from '../state.js';
import { badge, csrfField, field, notice, postButton, section, select, table } from '../views/components.js';
import { deliveryError } from '../views/delivery-errors.js';
import { html } from '../views/html.js';
import { page } from '../views/layout.js';

export interface AlertsRouteDeps {
  db: Db;
  allowPrivateWebhookTargets: boolean;
}

// A refused form redirects back with one of these codes, shown as the sentence of the page's
// language. Only a code travels in the address: text taken from it would let any link put
// words of its own on the page.
const FORM_ERRORS = {
  webhook_url: 'alerts.error.webhookUrl',
  webhook_private: 'alerts.error.webhookPrivate',
  threshold: 'alerts.error.threshold',
  duplicate: 'alerts.error.duplicate',
} as const satisfies Record<string, MessageKey>;
type FormError = keyof typeof FORM_ERRORS;

export function registerAlertsRoutes(router: Router<DashboardState>, deps: AlertsRouteDeps): void {
  const { db } = deps;

  // Finance sees thresholds and the delivery log; only admins (and operators) change them.
  router.get('/orgs/:orgId/alerts', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'view_finance');
    const { t, f } = ctx.state;
    const manage = can(view.org.role, 'manage_alerts');
    const [settings, thresholds, deliveries] = await Promise.all([alertSettings(db, view.org.id), listThresholds(db, view.org.id), listDeliveries(db, view.org.id)]);
    const currentPeriod = (await db('allowances').where({ organization_id: view.org.id }).first<{ period: string } | undefined>('period'))?.period;
    const code = typeof ctx.query.error === 'string' ? ctx.query.error : '';
    const error = Object.hasOwn(FORM_ERRORS, code) ? t(FORM_ERRORS[code as FormError]) : null;
    const body = html`
      ${ctx.query.done === 'saved' ? notice(t('alerts.saved'), 'good') : ''}
      ${error ? notice(t('error.invalid', { message: error }), 'bad') : ''}
      <p class="lead">${t('alerts.intro')}</p>
      ${section(t('alerts.webhook'), html`
        ${settings.webhookUrl ? '' : html`<p class="muted">${t('alerts.noWebhook')}</p>`}
        ${manage ? html`<form method="post" action="/orgs/${view.org.id}/alerts/webhook" class="form-row">
          ${csrfField(ctx.state)}
          ${field({ label: t('alerts.webhookUrl'), name: 'webhookUrl', type: 'url', value: settings.webhookUrl ?? '', help: t('alerts.webhookHelp'), placeholder: 'https://example.com/hooks/allowance', id: 'webhook-url' })}
          <div class="field field-button"><button class="btn btn-primary" type="submit">${t('common.save')}</button></div>
        </form>
        <details class="secret-box"><summary>${t('alerts.reveal')}</summary>
          <div class="secret-row"><code id="webhook-secret" class="secret" tabindex="0">${settings.webhookSecret}</code>
          <button type="button" class="btn btn-secondary" data-copy="webhook-secret" data-copied="${t('common.copied')}">${t('common.copy')}</button>
          ${postButton(ctx.state, `/orgs/${view.org.id}/alerts/secret`, t('alerts.rotateSecret'), { tone: 'secondary' })}</div>
          <p class="muted small">${t('alerts.verifyHelp')}</p>
        </details>` : html`<p>${settings.webhookUrl ?? '—'}</p>`}`, { id: 'alerts-webhook' })}
      ${section(t('alerts.thresholds'), html`
        ${table({
          caption: t('alerts.thresholds'),
          headers: [t('alerts.kind'), t('alerts.value'), t('common.status'), manage ? t('common.actions') : ''],
          rows: thresholds.map((x) => [
            t(`alerts.kind.${x.kind}`),
            x.kind === 'percent_used' ? `${x.value}%` : f.number(x.value),
            x.firedPeriod && x.firedPeriod === currentPeriod && x.firedAt ? badge(t('alerts.fired', { time: f.dateTime(x.firedAt) }), 'warn') : badge(t('alerts.armed'), 'good'),
            manage ? postButton(ctx.state, `/orgs/${view.org.id}/alerts/thresholds/${x.id}/delete`, t('common.remove'), { tone: 'danger' }) : '',
          ]),
          empty: t('common.noRows'),
        })}
        ${manage ? html`<form method="post" action="/orgs/${view.org.id}/alerts/thresholds" class="form-row">
          ${csrfField(ctx.state)}
          ${select({ label: t('alerts.kind'), name: 'kind', choices: thresholdKinds.map((k) => ({ value: k, label: t(`alerts.kind.${k}`) })), value: 'percent_used', id: 'threshold-kind' })}
          ${field({ label: t('alerts.value'), name: 'value', type: 'number', required: true, min: 0, id: 'threshold-value' })}
          <div class="field field-button"><button class="btn btn-primary" type="submit">${t('alerts.add')}</button></div>
        </form>` : ''}`, { id: 'alerts-thresholds' })}
      ${section(t('alerts.deliveries'), table({
        caption: t('alerts.deliveries'),
        headers: [t('common.created'), t('report.type'), t('common.status'), t('alerts.attempts'), t('alerts.response'), t('alerts.nextAttempt')],
        rows: deliveries.map((d) => [
          f.dateTime(d.createdAt),
          html`<code>${d.eventType}</code><div class="muted small">${d.id}</div>`,
          badge(t(`alerts.delivery.status.${d.status}`), d.status === 'delivered' ? 'good' : d.status === 'failed' ? 'bad' : 'warn'),
          String(d.attempts),
          d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : d.lastError === null ? '—' : deliveryError(ctx.state, d.lastError),
          d.nextAttemptAt && d.status === 'pending' ? f.dateTime(d.nextAttemptAt) : '—',
        ]),
        numeric: [3],
        empty: t('common.noRows'),
      }), { id: 'alerts-deliveries' })}`;
    ctx.body = page(ctx.state, { title: t('alerts.title'), body, org: view.org, active: 'alerts', memberships: view.memberships, banners: view.banners, path: ctx.path });
  });

  const afterChange = (orgId: string, error?: FormError) => (error ? `/orgs/${orgId}/alerts?error=${error}` : `/orgs/${orgId}/alerts?done=saved`);

  router.post('/orgs/:orgId/alerts/webhook', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_alerts');
    try {
      await withAudit(
        db,
        (trx) => setWebhookUrl(trx, view.org.id, ctx.state.form.webhookUrl ?? null, { allowPrivateTargets: deps.allowPrivateWebhookTargets }),
        () => ({ organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'alerts.webhook_set' }),
      );
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_params') {
        return ctx.redirect(afterChange(view.org.id, err.details?.[0]?.message === PRIVATE_WEBHOOK_TARGET ? 'webhook_private' : 'webhook_url'));
      }
      throw err;
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
      await withAudit(
        db,
        (trx) => addThreshold(trx, view.org.id, { kind, value: ctx.state.form.value ?? '' }),
        // The value saved, not the text typed.
        (threshold) => ({ organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'alerts.threshold_added', details: { kind, value: threshold.value } }),
      );
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_params') {
        return ctx.redirect(afterChange(view.org.id, err.details?.[0]?.message === THRESHOLD_ALREADY_SET ? 'duplicate' : 'threshold'));
      }
      throw err;
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
