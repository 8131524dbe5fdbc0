import type { Router } from '@koa/router';
import { z } from 'zod';
import { addThreshold, alertSettings, deliveriesPage, listThresholds, removeThreshold, rotateWebhookSecret, setWebhookUrl, thresholdKinds } from '../../core/alerts/index.js';
import { can, withAudit } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { AppError, parseInput } from '../../core/errors/index.js';
import { claimSubmission, submissionField } from '../form-submission.js';
import { orgAccess, type OrgView } from '../org-access.js';
import type { Language } from '../i18n/translate.js';
import type { DashboardContext, DashboardState } from '../state.js';
import { badge, copyButton, csrfField, field, notice, postButton, section, select, table } from '../views/components.js';
import { deliveryError } from '../views/delivery-errors.js';
import { html, type Html, type HtmlValue } from '../views/html.js';
import { fieldRefusals, invalidInputMessage, THRESHOLD_KIND_REFUSED } from '../views/invalid-input.js';
import { page } from '../views/layout.js';
import { cursorPager, rowPagerPosition, rowPagerQuery } from '../views/row-pager.js';

export interface AlertsRouteDeps {
  db: Db;
  allowPrivateWebhookTargets: boolean;
  /** The API's public address (PUBLIC_BASE_URL), which serves the customers' guide: the page links
   * its section on alert webhooks. */
  apiBaseUrl?: string;
}

// The guide's section on alert webhooks (payload, headers, retries, the signature check), by the
// anchor of its heading in each language: "### Alert webhooks", "### Webhook degli avvisi".
const webhookGuideAnchor: Record<Language, string> = { en: 'alert-webhooks', it: 'webhook-degli-avvisi' };

/** The guide's section on alert webhooks, served by the API, in the page's language. */
function webhookGuideLink(state: DashboardState, apiBaseUrl: string): Html {
  const { t, lang } = state;
  return html`<p class="muted small" id="webhook-guide">${t('alerts.verifyHelp')} <a href="${apiBaseUrl}/docs/getting-started?lang=${lang}#${webhookGuideAnchor[lang]}" hreflang="${lang}">${t('alerts.verifyGuide')}</a></p>`;
}

// A threshold's id as core makes it (newId('thr')).
const THRESHOLD_ID = /^thr_[0-9A-Za-z]+$/;

// The threshold form's condition: only the kinds it offers. Its value is core's to check (its
// range depends on the kind).
const thresholdFormSchema = z.object({ kind: z.enum(thresholdKinds, THRESHOLD_KIND_REFUSED) });

/** A refused form, shown again: what was typed, and why each field was refused. */
interface Refused {
  typed: Partial<Record<string, string>>;
  error: AppError;
}

/** The alerts page: finance sees thresholds and the delivery log; only admins (and operators) get the forms. */
async function renderAlerts(ctx: DashboardContext, deps: AlertsRouteDeps, view: OrgView, options: { top?: HtmlValue; refused?: Refused } = {}): Promise<void> {
  const { t, f } = ctx.state;
  const { db } = deps;
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
      ${options.refused ? notice(t('error.invalid', { message: invalidInputMessage(ctx.state, options.refused.error, { kind: 'alerts.kind' }) }), 'bad') : ''}
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
          ${deps.apiBaseUrl ? webhookGuideLink(ctx.state, deps.apiBaseUrl) : ''}
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
          ${select({ label: t('alerts.kind'), name: 'kind', choices: thresholdKinds.map((k) => ({ value: k, label: t(`alerts.kind.${k}`) })), value: typed.kind ?? 'percent_used', id: 'threshold-kind', error: refusals.kind })}
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
    const top = ctx.query.done === 'saved' ? notice(ctx.state.t('alerts.saved'), 'good') : ctx.query.done === 'threshold_gone' ? notice(ctx.state.t('alerts.thresholdAlreadyRemoved'), 'info') : undefined;
    await renderAlerts(ctx, deps, view, { top });
  });

  // A saved change redirects (a reload does not send it again); a refused one answers with the
  // form as typed and why, as the other forms do.
  const afterChange = (orgId: string) => `/orgs/${orgId}/alerts?done=saved`;
  const refuse = async (ctx: DashboardContext, view: OrgView, err: unknown, fields: string[]) => {
    if (!(err instanceof AppError && err.code === 'invalid_params')) throw err;
    ctx.status = 422;
    const typed = Object.fromEntries(fields.map((name) => [name, ctx.state.form[name]]));
    await renderAlerts(ctx, deps, view, { refused: { typed, error: err } });
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
    try {
      // A condition the form does not offer (a hand-made request) is refused under its own field,
      // not as a value out of range, which core would say.
      const { kind } = parseInput(thresholdFormSchema, ctx.state.form);
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
    const thresholdId = ctx.params.id!;
    const removed = await withAudit(
      db,
      (trx) => removeThreshold(trx, view.org.id, thresholdId),
      (done) => (done ? { organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'alerts.threshold_removed', details: { thresholdId } } : null),
    );
    if (!removed) {
      // Removed already (another tab, a double submit): a removed threshold's row is gone, so a
      // threshold id that no row holds any more is said so. Another organization's threshold, or
      // an id that is not one, is still "not found", exactly as before.
      if (!THRESHOLD_ID.test(thresholdId) || (await db('alert_thresholds').where({ id: thresholdId }).first('id'))) throw new AppError('not_found', 'No such threshold.');
      return ctx.redirect(`/orgs/${view.org.id}/alerts?done=threshold_gone`);
    }
    ctx.redirect(afterChange(view.org.id));
  });
}
