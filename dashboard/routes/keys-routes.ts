import type { Router } from '@koa/router';
import { z } from 'zod';
import { apiKeyState, createApiKey, endOfDayUtc, getApiKey, listApiKeys, revokeApiKey, type ApiKeyRecord } from '../../core/auth/index.js';
import { withAudit } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { AppError, parseInput } from '../../core/errors/index.js';
import { rotateApiKey, rotationGraceSeconds } from '../../core/key-rotation/index.js';
import type { MessageKey } from '../i18n/translate.js';
import { orgAccess, type OrgView } from '../org-access.js';
import type { DashboardContext, DashboardState } from '../state.js';
import { badge, csrfField, field, notice, postButton, section, select, table } from '../views/components.js';
import { fieldRefusals, invalidInputMessage } from '../views/invalid-input.js';
import { html, type Html, type HtmlValue } from '../views/html.js';
import { page } from '../views/layout.js';
import { answerRepeated, claimSubmission, submissionField } from '../form-submission.js';
import { putFlash, takeFlash } from '../session-flash.js';

export interface KeysRouteDeps {
  db: Db;
  /** Shown in the "try it" line under a new key. */
  apiBaseUrl?: string;
}

// The "new key" form. A date means "valid through that day": the key expires at the end of it,
// UTC; blank means it never expires. Anything else is refused, never read as "never": a typo
// must not quietly make a key that outlives what the admin asked for. z.iso.date() also refuses
// 2030-02-31, which `new Date` would roll over to 3 March.
const rotateFormSchema = z.object({ graceSeconds: z.enum(rotationGraceSeconds.map(String) as [string, ...string[]]) });

const createKeyFormSchema = z.object({
  name: z.string().default(''),
  expiresOn: z
    .string()
    .trim()
    .pipe(z.union([z.literal(''), z.iso.date('must be a date as YYYY-MM-DD (e.g. 2030-12-31), or blank for a key that never expires')]))
    .default('')
    .transform((day) => (day === '' ? null : endOfDayUtc(day))),
});

// A new key waits in the session for the keys page to show it once (see session-flash.ts).
const newKeyFlashSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('created'), key: z.string() }),
  // oldKeyUntil: when the replaced key stops working; null: it was revoked at once.
  z.object({ kind: z.literal('rotated'), key: z.string(), fromPrefix: z.string(), oldKeyUntil: z.coerce.date().nullable() }),
]);
type NewKeyFlash = z.input<typeof newKeyFlashSchema>;

const keysPath = (orgId: string) => `/orgs/${orgId}/keys`;

// "Expiring" warns of a key that stops working soon (a rotated one in its grace period, or a
// dated key near its date), not of every key that has a date years ahead.
const EXPIRING_WITHIN_MS = 30 * 86_400_000;

function keyStatus(state: DashboardState, key: ApiKeyRecord, now: Date): Html {
  const s = apiKeyState(key, now);
  if (s === 'active' && key.expiresAt && key.expiresAt.getTime() - now.getTime() <= EXPIRING_WITHIN_MS) return badge(state.t('keys.state.expiring'), 'warn');
  return badge(state.t(`keys.state.${s}`), s === 'active' ? 'good' : 'neutral');
}

function newKeyPanel(state: DashboardState, key: string, apiBaseUrl: string | undefined): Html {
  const { t } = state;
  return html`<section class="card card-highlight" aria-labelledby="new-key-title">
    <h2 id="new-key-title">${t('keys.newKeyTitle')}</h2>
    <p>${t('keys.newKeyOnce')}</p>
    <div class="secret-row">
      <code id="new-key" class="secret" tabindex="0">${key}</code>
      <button type="button" class="btn btn-primary" data-copy="new-key" data-copied="${t('common.copied')}">${t('common.copy')}</button>
    </div>
    ${apiBaseUrl ? html`<p class="muted small">${t('keys.tryIt')}: <code>curl -H "Authorization: Bearer ${key.slice(0, 12)}…" ${apiBaseUrl}/openapi.json</code></p>` : ''}
  </section>`;
}

// What the keys page shows once after a create or a rotation.
function newKeyTop(state: DashboardState, flash: z.output<typeof newKeyFlashSchema>, apiBaseUrl: string | undefined): Html {
  const { t, f } = state;
  const panel = newKeyPanel(state, flash.key, apiBaseUrl);
  if (flash.kind === 'created') return panel;
  const when = flash.oldKeyUntil ? t('keys.rotatedAt', { time: f.dateTime(flash.oldKeyUntil) }) : t('keys.rotatedNow');
  return html`${notice(t('keys.rotated', { prefix: `${flash.fromPrefix}…`, when }), 'good')}${panel}`;
}

async function renderKeysPage(ctx: DashboardContext, deps: KeysRouteDeps, view: OrgView, extra: { top?: HtmlValue; typed?: { name?: string; expiresOn?: string }; refusals?: Partial<Record<string, string>> } = {}): Promise<void> {
  const { t, f } = ctx.state;
  const now = new Date();
  const keys = (await listApiKeys(deps.db, view.org.id)).reverse();
  const prefixById = new Map(keys.map((k) => [k.id, k.prefix]));
  const rotatedFrom = new Map((await deps.db('api_keys').where({ organization_id: view.org.id }).whereNotNull('rotated_from').select<{ id: string; rotated_from: string }[]>('id', 'rotated_from')).map((r) => [r.id, r.rotated_from]));
  // A key already replaced cannot be rotated again (its successor can): no Rotate on it.
  const replaced = new Set(rotatedFrom.values());
  const graceChoices = rotationGraceSeconds.map((s) => ({ value: String(s), label: t(`keys.grace.${s}` as MessageKey) }));
  const rows = keys.map((k) => {
    const active = apiKeyState(k, now) === 'active';
    const from = rotatedFrom.get(k.id);
    return [
      html`<strong>${k.name}</strong>${from ? html`<div class="muted small">${t('keys.rotatedFrom', { prefix: `${prefixById.get(from) ?? from}…` })}</div>` : ''}`,
      html`<code>${k.prefix}…</code>`,
      keyStatus(ctx.state, k, now),
      f.dateTime(k.createdAt),
      k.lastUsedAt ? f.dateTime(k.lastUsedAt) : html`<span class="muted">${t('common.never')}</span>`,
      k.expiresAt ? f.dateTime(k.expiresAt) : html`<span class="muted">${t('common.never')}</span>`,
      active
        ? html`<div class="actions">
            ${replaced.has(k.id) ? '' : html`<details class="menu"><summary class="btn btn-secondary">${t('keys.rotate')}</summary>
              <form method="post" action="/orgs/${view.org.id}/keys/${k.id}/rotate" class="menu-body stack">
                ${csrfField(ctx.state)}${submissionField()}
                ${select({ label: t('keys.grace'), name: 'graceSeconds', choices: graceChoices, value: '86400', id: `grace-${k.id}` })}
                <button type="submit" class="btn btn-primary">${t('keys.rotate')}</button>
              </form>
            </details>`}
            ${postButton(ctx.state, `/orgs/${view.org.id}/keys/${k.id}/revoke`, t('keys.revoke'), { tone: 'danger', confirm: t('keys.revokeConfirm', { name: k.name }) })}
          </div>`
        : '',
    ];
  });
  const body = html`
    ${extra.top ?? ''}
    <p class="lead">${t('keys.intro')}</p>
    ${section(t('keys.createTitle'), html`<form method="post" action="/orgs/${view.org.id}/keys" class="form-row">
        ${csrfField(ctx.state)}${submissionField()}
        ${field({ label: t('common.name'), name: 'name', required: true, help: t('keys.nameHelp'), id: 'key-name', value: extra.typed?.name ?? '', error: extra.refusals?.name })}
        ${field({ label: t('keys.expiry'), name: 'expiresOn', type: 'date', help: t('keys.expiryHelp'), id: 'key-expiry', value: extra.typed?.expiresOn ?? '', error: extra.refusals?.expiresOn ?? extra.refusals?.['body.expiresAt'] })}
        <div class="field field-button"><button type="submit" class="btn btn-primary">${t('keys.create')}</button></div>
      </form>`)}
    ${section(t('keys.title'), table({
      caption: t('keys.title'),
      headers: [t('common.name'), t('keys.prefix'), t('common.status'), t('common.created'), t('keys.lastUsed'), t('keys.expires'), t('common.actions')],
      rows,
      empty: t('keys.none'),
    }), { id: 'keys-list' })}`;
  ctx.body = page(ctx.state, { title: t('keys.title'), body, org: view.org, active: 'keys', memberships: view.memberships, banners: view.banners, path: ctx.url });
}

export function registerKeysRoutes(router: Router<DashboardState>, deps: KeysRouteDeps): void {
  const { db } = deps;
  const requireKey = async (orgId: string, keyId: string) => {
    const key = await getApiKey(db, keyId);
    // A key of another organization is "not found", exactly like a key that does not exist.
    if (!key || key.organizationId !== orgId) throw new AppError('not_found', 'No such key.');
    return key;
  };

  // Why rotateApiKey refused a key, told by the key's state now (both states are final: a key
  // keeps its successor, and a revoked or expired key stays so), not by its English message.
  const whyNotRotated = async (keyId: string): Promise<MessageKey | undefined> => {
    if (await db('api_keys').where({ rotated_from: keyId }).first('id')) return 'keys.error.alreadyRotated';
    const key = await getApiKey(db, keyId);
    return key && apiKeyState(key, new Date()) !== 'active' ? 'keys.error.notActive' : undefined;
  };

  // A form that made a key answers 303 to the keys page, which shows the key once; reloading
  // that page (or going Back to it) shows the list and makes nothing. The key waits for it in
  // the transaction that made it: a repeat of the form (a double-click), waiting for that
  // transaction, finds the key already waiting.
  const keepToShow = (trx: Db, ctx: DashboardContext, orgId: string, flash: NewKeyFlash) => putFlash(trx, ctx.state.sessionToken!, keysPath(orgId), flash);
  const showOnce = (ctx: DashboardContext, orgId: string) => {
    ctx.redirect(keysPath(orgId));
    ctx.status = 303;
  };

  router.get('/orgs/:orgId/keys', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_keys');
    const flash = await takeFlash(db, ctx.state.sessionToken!, keysPath(view.org.id), newKeyFlashSchema);
    if (flash) return renderKeysPage(ctx, deps, view, { top: newKeyTop(ctx.state, flash, deps.apiBaseUrl) });
    // After a revocation the address names the key, and the notice shows that key's prefix if it
    // is this organization's and revoked: text taken from the address would let a link put
    // words of its own on the page.
    const revokedId = ctx.query.done === 'revoked' && typeof ctx.query.key === 'string' ? ctx.query.key : null;
    const revoked = revokedId ? await getApiKey(db, revokedId) : null;
    const top = revoked && revoked.organizationId === view.org.id && revoked.revokedAt
      ? notice(ctx.state.t('keys.revoked', { prefix: `${revoked.prefix}…` }), 'good')
      : ctx.query.done === 'repeated' ? notice(ctx.state.t('form.repeated'), 'info') : undefined;
    await renderKeysPage(ctx, deps, view, { top });
  });

  router.post('/orgs/:orgId/keys', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_keys');
    try {
      const { name, expiresOn: expiresAt } = parseInput(createKeyFormSchema, ctx.state.form);
      const created = await withAudit(
        db,
        async (trx) => {
          if (!(await claimSubmission(trx, ctx))) return null; // sent before: made nothing
          const c = await createApiKey(trx, { organizationId: view.org.id, name, expiresAt, createdBy: ctx.state.session!.user.id });
          await keepToShow(trx, ctx, view.org.id, { kind: 'created', key: c.key });
          return c;
        },
        (c) => c && { organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'key.created', details: { keyId: c.record.id, name: c.record.name } },
      );
      if (!created) return await answerRepeated(db, ctx, keysPath(view.org.id));
      showOnce(ctx, view.org.id);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.status = 422;
      // The form comes back as it was typed, with what to change (under each field, too).
      await renderKeysPage(ctx, deps, view, {
        top: notice(ctx.state.t('error.invalid', { message: invalidInputMessage(ctx.state, err) }), 'bad'),
        typed: { name: ctx.state.form.name, expiresOn: ctx.state.form.expiresOn },
        refusals: fieldRefusals(ctx.state, err),
      });
    }
  });

  router.post('/orgs/:orgId/keys/:keyId/revoke', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_keys');
    const key = await requireKey(view.org.id, ctx.params.keyId!);
    await withAudit(
      db,
      (trx) => revokeApiKey(trx, key.id, ctx.state.session!.user.id),
      // A second click (or a stale page) changes nothing: no second row.
      (r) => (r.revoked ? { organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'key.revoked', details: { keyId: key.id } } : null),
    );
    ctx.redirect(`/orgs/${view.org.id}/keys?done=revoked&key=${encodeURIComponent(key.id)}`);
  });

  // A rotation once answered at this address (before it redirected): opened again from history
  // or a bookmark, it lands on the keys page, not on a 404.
  router.get('/orgs/:orgId/keys/:keyId/rotate', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_keys');
    ctx.redirect(`/orgs/${view.org.id}/keys`);
  });

  router.post('/orgs/:orgId/keys/:keyId/rotate', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_keys');
    const key = await requireKey(view.org.id, ctx.params.keyId!);
    // Only the choices the form offers: a value it does not offer is refused, not read as a day.
    const graceSeconds = Number(parseInput(rotateFormSchema, ctx.state.form).graceSeconds);
    let rotated;
    try {
      rotated = await withAudit(
        db,
        async (trx) => {
          // Sent before (a double-click): not refused as "already rotated", which would hide the
          // first rotation's key; answered as the first was.
          if (!(await claimSubmission(trx, ctx))) return null;
          const r = await rotateApiKey(trx, { keyId: key.id, organizationId: view.org.id, graceSeconds, by: ctx.state.session!.user.id });
          await keepToShow(trx, ctx, view.org.id, { kind: 'rotated', key: r.created.key, fromPrefix: key.prefix, oldKeyUntil: graceSeconds === 0 ? null : r.previous.expiresAt });
          return r;
        },
        (r) => r && { organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'key.rotated', details: { from: key.id, to: r.created.record.id, graceSeconds } },
      );
    } catch (err) {
      const why = err instanceof AppError && err.code === 'invalid_params' ? await whyNotRotated(key.id) : undefined;
      if (!why) throw err;
      ctx.status = 422;
      return renderKeysPage(ctx, deps, view, { top: notice(ctx.state.t(why), 'bad') });
    }
    if (!rotated) return answerRepeated(db, ctx, keysPath(view.org.id));
    showOnce(ctx, view.org.id);
  });
}
