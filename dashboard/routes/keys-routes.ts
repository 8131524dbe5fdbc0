import type { Router } from '@koa/router';
import { z } from 'zod';
import { apiKeysPage, apiKeyState, apiKeyStates, apiKeyStatus, createApiKey, createApiKeyInputSchema, endOfDayUtc, getApiKey, revokeApiKey, type ApiKeyRecord, type ApiKeyState } from '../../core/auth/index.js';
import { withAudit } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { AppError, parseInput } from '../../core/errors/index.js';
import { rotateApiKey, rotationGraceSeconds } from '../../core/key-rotation/index.js';
import type { MessageKey } from '../i18n/translate.js';
import { orgAccess, type OrgView } from '../org-access.js';
import type { DashboardContext, DashboardState } from '../state.js';
import { badge, copyButton, csrfField, field, notice, postButton, section, select, table } from '../views/components.js';
import { fieldRefusals, invalidInputMessage, KEY_MODE_REFUSED } from '../views/invalid-input.js';
import { html, type Html, type HtmlValue } from '../views/html.js';
import { page } from '../views/layout.js';
import { cursorPager, rowPagerPosition, rowPagerQuery } from '../views/row-pager.js';
import { answerRepeated, claimSubmission, submissionField, submissionOf } from '../form-submission.js';
import { putFlash, takeFlash } from '../session-flash.js';

export interface KeysRouteDeps {
  db: Db;
  /** The API's public address (PUBLIC_BASE_URL): in the "Try it" command under a new key, and the
   * links to the getting-started guide and the reference. */
  apiBaseUrl?: string;
}

// The "new key" form. A date means "valid through that day": the key expires at the end of it,
// UTC; blank means it never expires. Anything else is refused, never read as "never": a typo
// must not quietly make a key that outlives what the admin asked for. z.iso.date() also refuses
// 2030-02-31, which `new Date` would roll over to 3 March.
const rotateFormSchema = z.object({ graceSeconds: z.enum(rotationGraceSeconds.map(String) as [string, ...string[]]) });

// Mode: live unless the form says test. A test key (`sk_test_…`) is a label for development and
// CI, told apart by its prefix so it can be found and revoked without touching production's;
// it answers with the same data and is billed like a live key (docs/api.md: there is no sandbox
// data set). Only the two values the form offers: anything else is refused, not read as live.
const keyModes = ['live', 'test'] as const;

// Every field is checked here, so a form with several bad fields has each refused at once (the
// name by core's own rule for it: blank, too long, a control character); createApiKey checks
// them again, the last line for every caller.
const createKeyFormSchema = z.object({
  name: z.string().default('').pipe(createApiKeyInputSchema.shape.name),
  mode: z.enum(keyModes, KEY_MODE_REFUSED).default('live'),
  expiresOn: z
    .string()
    .trim()
    .pipe(z.union([z.literal(''), z.iso.date('must be a date as YYYY-MM-DD (e.g. 2030-12-31), or blank for a key that never expires')]))
    .default('')
    .transform((day) => (day === '' ? null : endOfDayUtc(day)))
    // core's words for a past day (createApiKey), which the page says in its language.
    .refine((expiresAt) => expiresAt === null || expiresAt.getTime() > Date.now(), 'must be in the future'),
});

// A new key waits in the session for the keys page to show it once (see session-flash.ts).
const newKeyFlashSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('created'), key: z.string() }),
  // oldKeyUntil: when the replaced key stops working; null: it was revoked at once.
  z.object({ kind: z.literal('rotated'), key: z.string(), fromPrefix: z.string(), oldKeyUntil: z.coerce.date().nullable() }),
]);
type NewKeyFlash = z.input<typeof newKeyFlashSchema>;

const keysPath = (orgId: string) => `/orgs/${orgId}/keys`;

// Which keys the list shows (`?state=`): the active ones unless asked otherwise. An admin comes
// here to manage the keys in use; the revoked and expired ones, which pile up with every
// rotation, are one click away for an audit. A value the page does not offer shows the default,
// as the ledger treats an unknown type.
type KeysFilter = ApiKeyState | 'all';
const keysFilters: readonly KeysFilter[] = ['all', ...apiKeyStates];
const DEFAULT_FILTER: KeysFilter = 'active';
const isKeysFilter = (value: unknown): value is KeysFilter => keysFilters.includes(value as KeysFilter);

/** The list at one filter, search and position: `?state=…&q=…&page=…` (or `older=`, `newer=`: the pager's Previous and Next, by row), which the tabs, the pager's links and the revocation's return keep. */
const keysListPath = (orgId: string, filter: KeysFilter, search: string, position: Record<string, string> = {}) =>
  `${keysPath(orgId)}?${new URLSearchParams({ state: filter, ...(search ? { q: search } : {}), ...position })}`;

// The search as typed, trimmed; longer than any key's name it could match is cut there.
const MAX_SEARCH = 100;
const searchOf = (value: unknown): string => (typeof value === 'string' ? value.trim().slice(0, MAX_SEARCH) : '');

// The status `cli key list` shows too (core/auth: apiKeyStatus).
function keyStatus(state: DashboardState, key: ApiKeyRecord, now: Date): Html {
  const s = apiKeyStatus(key, now);
  return badge(state.t(`keys.state.${s}`), s === 'active' ? 'good' : s === 'expiring' ? 'warn' : 'neutral');
}

// A command that works as pasted: the whole key in it (a shortened one, `sk_live_ab12…`, was
// refused as missing or invalid), calling the one address that answers any working key and is
// not charged: the key's own description of what it may call, in the page's language (the
// address quoted: zsh, macOS's shell, refuses an unquoted `?` that matches no file).
function tryIt(state: DashboardState, key: string, apiBaseUrl: string): Html {
  const { t, lang } = state;
  return html`<p class="muted small">${t('keys.tryIt')}</p>
    <div class="secret-row">
      <code id="try-it" class="secret command" tabindex="0">curl -H "Authorization: Bearer ${key}" "${apiBaseUrl}/openapi.json${lang === 'it' ? '?lang=it' : ''}"</code>
      ${copyButton(state, 'try-it', { label: t('keys.copyCommand'), tone: 'secondary' })}
    </div>`;
}

// Where a developer goes next with a key: the guide and the reference, both served by the API
// without a key (at PUBLIC_BASE_URL), in the page's language.
function apiDocsLinks(state: DashboardState, apiBaseUrl: string): Html {
  const { t, lang } = state;
  return html`<p id="api-docs">${t('keys.docsIntro')} <a href="${apiBaseUrl}/docs/getting-started?lang=${lang}" hreflang="${lang}">${t('keys.guide')}</a> · <a href="${apiBaseUrl}/docs?lang=${lang}" hreflang="${lang}">${t('keys.reference')}</a></p>`;
}

function newKeyPanel(state: DashboardState, key: string, apiBaseUrl: string | undefined): Html {
  const { t } = state;
  // Focus moves here when the page opens (autofocus), so a screen reader reads the panel out
  // first, and keyboard users start at the Copy button; a live region besides, for readers that
  // announce one present on load.
  return html`<section id="new-key-panel" class="card card-highlight" aria-labelledby="new-key-title" aria-live="polite" tabindex="-1" autofocus>
    <h2 id="new-key-title">${t('keys.newKeyTitle')}</h2>
    <p>${t('keys.newKeyOnce')}</p>
    <div class="secret-row">
      <code id="new-key" class="secret" tabindex="0">${key}</code>
      ${copyButton(state, 'new-key')}
    </div>
    ${apiBaseUrl ? tryIt(state, key, apiBaseUrl) : ''}
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

// The earliest expiry the date picker offers: a key valid through tomorrow (UTC, as the form
// reads the date), so a past date cannot be picked; typed anyway, the server refuses it.
const tomorrowUtc = (now: Date) => new Date(now.getTime() + 86_400_000).toISOString().slice(0, 10);

/** All / Active / Revoked / Expired, each with its count (of the search's keys, with one); a filter starts at its first page. */
function filterTabs(state: DashboardState, orgId: string, current: KeysFilter, search: string, counts: Record<KeysFilter, number>): Html {
  const { t, f } = state;
  return html`<nav class="tabs" aria-label="${t('keys.filter')}">${keysFilters.map((s) => html`<a class="tab" href="${keysListPath(orgId, s, search)}"${s === current ? html` aria-current="page"` : ''}>${t(`keys.filter.${s}`)} <span class="muted">${f.number(counts[s])}</span></a>`)}</nav>`;
}

/** Find keys by name or prefix, in the filter shown; a GET form, so the result has an address. */
function searchForm(state: DashboardState, orgId: string, filter: KeysFilter, search: string): Html {
  const { t } = state;
  return html`<form method="get" action="${keysPath(orgId)}" class="form-row" role="search">
    <input type="hidden" name="state" value="${filter}">
    ${field({ label: t('keys.search'), name: 'q', type: 'search', id: 'key-search', value: search, help: t('keys.searchHelp') })}
    <div class="field field-button"><button type="submit" class="btn btn-secondary">${t('keys.searchButton')}</button>
    ${search ? html` <a class="btn btn-secondary" href="${keysListPath(orgId, filter, '')}">${t('keys.searchClear')}</a>` : ''}</div>
  </form>`;
}

async function renderKeysPage(ctx: DashboardContext, deps: KeysRouteDeps, view: OrgView, extra: { top?: HtmlValue; typed?: { name?: string; expiresOn?: string; mode?: string }; refusals?: Partial<Record<string, string>> } = {}): Promise<void> {
  const { t, f } = ctx.state;
  const { db } = deps;
  const now = new Date();
  const filter = isKeysFilter(ctx.query.state) ? ctx.query.state : DEFAULT_FILTER;
  const search = searchOf(ctx.query.q);
  // Paged as the ledger is: not a number, the first page; past the end, the last.
  // Previous and Next by row (`?older=` / `?newer=`): a key made meanwhile shifts no page.
  const result = await apiKeysPage(db, view.org.id, { state: filter === 'all' ? null : filter, search, now, ...rowPagerPosition(ctx.query) });
  const keys = result.rows;
  const ids = keys.map((k) => k.id);
  // Rotations of this page's keys only: the key each replaces (by its prefix, wherever it is
  // listed), and which of them a newer key replaces.
  const [predecessors, successors] = await Promise.all([
    db('api_keys as k').join('api_keys as p', 'p.id', 'k.rotated_from').whereIn('k.id', ids).select<{ id: string; prefix: string }[]>('k.id', 'p.prefix'),
    db('api_keys').where({ organization_id: view.org.id }).whereIn('rotated_from', ids).select<{ rotated_from: string }[]>('rotated_from'),
  ]);
  const rotatedFromPrefix = new Map(predecessors.map((r) => [r.id, r.prefix]));
  // A key already replaced cannot be rotated again (its successor can): no Rotate on it.
  const replaced = new Set(successors.map((r) => r.rotated_from));
  const graceChoices = rotationGraceSeconds.map((s) => ({ value: String(s), label: t(`keys.grace.${s}` as MessageKey) }));
  const rows = keys.map((k) => {
    const active = apiKeyState(k, now) === 'active';
    const fromPrefix = rotatedFromPrefix.get(k.id);
    return [
      html`<strong>${k.name}</strong>${fromPrefix ? html`<div class="muted small">${t('keys.rotatedFrom', { prefix: `${fromPrefix}…` })}</div>` : ''}`,
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
            ${postButton(ctx.state, `/orgs/${view.org.id}/keys/${k.id}/revoke`, t('keys.revoke'), { tone: 'danger', confirm: t('keys.revokeConfirm', { name: k.name }), fields: { state: filter, ...(search ? { q: search } : {}), page: String(result.page) } })}
          </div>`
        : '',
    ];
  });
  const body = html`
    ${extra.top ?? ''}
    <p class="lead">${t('keys.intro')}</p>
    ${deps.apiBaseUrl ? apiDocsLinks(ctx.state, deps.apiBaseUrl) : ''}
    ${section(t('keys.createTitle'), html`<form method="post" action="/orgs/${view.org.id}/keys" class="form-row">
        ${csrfField(ctx.state)}${submissionField()}
        ${field({ label: t('common.name'), name: 'name', required: true, help: t('keys.nameHelp'), id: 'key-name', value: extra.typed?.name ?? '', error: extra.refusals?.name })}
        ${select({ label: t('keys.mode'), name: 'mode', id: 'key-mode', choices: keyModes.map((m) => ({ value: m, label: t(`keys.mode.${m}`) })), value: extra.typed?.mode ?? 'live', help: t('keys.modeHelp'), error: extra.refusals?.mode })}
        ${field({ label: t('keys.expiryLabel'), name: 'expiresOn', type: 'date', min: tomorrowUtc(now), help: t('keys.expiryHelp'), id: 'key-expiry', value: extra.typed?.expiresOn ?? '', error: extra.refusals?.expiresOn ?? extra.refusals?.['body.expiresAt'] })}
        <div class="field field-button"><button type="submit" class="btn btn-primary">${t('keys.create')}</button></div>
      </form>`)}
    ${section(t('keys.title'), html`${searchForm(ctx.state, view.org.id, filter, search)}${table({
      caption: t('keys.title'),
      headers: [t('common.name'), t('keys.prefix'), t('common.status'), t('common.created'), t('keys.lastUsed'), t('keys.expires'), t('common.actions')],
      rows,
      empty: search ? t('keys.noneMatching', { search }) : result.counts.all === 0 || filter === 'all' ? t('keys.none') : t(`keys.noneInState.${filter}`),
    })}
      ${cursorPager(ctx.state, result, (to) => keysListPath(view.org.id, filter, search, rowPagerQuery(to)), 'keys')}`, { id: 'keys-list', actions: filterTabs(ctx.state, view.org.id, filter, search, result.counts) })}`;
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
  const keepToShow = (trx: Db, ctx: DashboardContext, orgId: string, flash: NewKeyFlash) => putFlash(trx, ctx.state.sessionToken!, keysPath(orgId), flash, submissionOf(ctx));
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
    const before = ctx.query.done === 'already_revoked';
    const revokedId = (ctx.query.done === 'revoked' || before) && typeof ctx.query.key === 'string' ? ctx.query.key : null;
    const revoked = revokedId ? await getApiKey(db, revokedId) : null;
    const top = revoked && revoked.organizationId === view.org.id && revoked.revokedAt
      ? before
        ? notice(ctx.state.t('keys.alreadyRevoked', { prefix: `${revoked.prefix}…`, date: ctx.state.f.dateTime(revoked.revokedAt) }), 'info')
        : notice(ctx.state.t('keys.revoked', { prefix: `${revoked.prefix}…` }), 'good')
      : ctx.query.done === 'repeated' ? notice(ctx.state.t('form.repeated'), 'info') : undefined;
    await renderKeysPage(ctx, deps, view, { top });
  });

  router.post('/orgs/:orgId/keys', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_keys');
    try {
      const { name, mode, expiresOn: expiresAt } = parseInput(createKeyFormSchema, ctx.state.form);
      const created = await withAudit(
        db,
        async (trx) => {
          if (!(await claimSubmission(trx, ctx))) return null; // sent before: made nothing
          const c = await createApiKey(trx, { organizationId: view.org.id, name, mode, expiresAt, createdBy: ctx.state.session!.user.id });
          await keepToShow(trx, ctx, view.org.id, { kind: 'created', key: c.key });
          return c;
        },
        (c) => c && { organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'key.created', details: { keyId: c.record.id, name: c.record.name, mode: c.record.mode } },
      );
      if (!created) return await answerRepeated(db, ctx, keysPath(view.org.id));
      showOnce(ctx, view.org.id);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.status = 422;
      // The form comes back as it was typed, with what to change (under each field, too).
      await renderKeysPage(ctx, deps, view, {
        top: notice(ctx.state.t('error.invalid', { message: invalidInputMessage(ctx.state, err) }), 'bad'),
        typed: { name: ctx.state.form.name, expiresOn: ctx.state.form.expiresOn, mode: ctx.state.form.mode },
        refusals: fieldRefusals(ctx.state, err),
      });
    }
  });

  router.post('/orgs/:orgId/keys/:keyId/revoke', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_keys');
    const key = await requireKey(view.org.id, ctx.params.keyId!);
    const { revoked } = await withAudit(
      db,
      (trx) => revokeApiKey(trx, key.id, ctx.state.session!.user.id),
      // A second click (or a stale page) changes nothing: no second row.
      (r) => (r.revoked ? { organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'key.revoked', details: { keyId: key.id } } : null),
    );
    // Back to the filter and page the key was revoked from (sent by its form), if any.
    const { state, q, page: pageNumber } = ctx.state.form;
    const search = searchOf(q);
    const back = { ...(isKeysFilter(state) ? { state } : {}), ...(search ? { q: search } : {}), ...(/^[1-9]\d{0,5}$/.test(pageNumber ?? '') ? { page: pageNumber! } : {}) };
    // A key revoked before (from another tab, by another admin) is said to have been, with its
    // date, as a member removed twice is: "revoked" again would read as a revocation just made.
    ctx.redirect(`/orgs/${view.org.id}/keys?${new URLSearchParams({ done: revoked ? 'revoked' : 'already_revoked', key: key.id, ...back })}`);
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
