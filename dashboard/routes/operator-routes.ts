import type { Router } from '@koa/router';
import {
  callsCapTerms, changeCredits, clearProductOverride, countOpenDeadLetters, createOrganization, ensureDefaultPlans, findProduct, getOrganization, getPlan, listPlans, MAX_CREDITS_PER_PERIOD, MAX_RATE_LIMIT, MAX_REASON, MAX_REFERENCE, nameTakenBy, planDefinitionSchema, productCatalogue, referencedEventId,
  setCallsCap, setOrganizationLimits, setOrganizationPlan, setProductOverride, usePlanCallsCap, type CallsCapTerms, type CreditChangeKind,
} from '../../core/billing/index.js';
import { createInvitation, recentAudit, withAudit, type CreatedInvitation } from '../../core/dashboard-auth/index.js';
import { CONTROL_MESSAGE, holdsControlCharacter, type Db } from '../../core/db/index.js';
import { z } from 'zod';
import { AppError, NO_PLUS_SIGN, parseInput, wholeNumberRefusal } from '../../core/errors/index.js';
import { coverageOf, organizationPeriodSettings, organizationsOverview, setCreditsPerPeriod } from '../../core/finance/index.js';
import { MAX_USAGE_QUANTITY } from '../../core/usage/index.js';
import type { DashboardContext, DashboardState } from '../state.js';
import { auditActor, describeAuditAction } from '../views/audit-entries.js';
import { asOfStamp, badge, csrfField, field, fieldAttributes, fieldError, notice, pagination, section, select, stat, table } from '../views/components.js';
import { CREDITS_PLUS_SIGN, fieldRefusals, invalidInputMessage } from '../views/invalid-input.js';
import { html, type Html, type HtmlValue } from '../views/html.js';
import { page } from '../views/layout.js';
import { OPERATOR_DASHBOARD_REASON } from '../views/ledger-reasons.js';
import { measure, unitWord } from '../views/units.js';
import { answerRepeated, claimSubmission, keepAnswer, keptAnswer, submissionField, submissionOf } from '../form-submission.js';
import { changedNotice, FormChanged, refuseIfChanged, shownFields } from '../form-version.js';
import { limitsForm, periodForm, planForm, productForm, productFormValues } from '../operator-form-versions.js';
import { putFlash, takeFlash } from '../session-flash.js';
import { invitationFlashSchema, invitationPanel, inviteForm } from './members-routes.js';

export interface OperatorRouteDeps {
  db: Db;
  /** Where invitation links point (see DashboardDeps.publicUrl). */
  publicUrl?: string;
}

function requireOperator(ctx: DashboardContext): string {
  const user = ctx.state.session!.user;
  // Not a 403: to everyone else the operator pages do not exist.
  if (!user.isOperator) throw new AppError('not_found', 'No such page.');
  return user.id;
}

// Digits only, as the CLI takes them: "1.000" is a thousand to an Italian and one to an English
// reader (and to the browser, whose number fields send "1.000" for 1), so reading separators by
// either language misreads the other; refused, the operator types 1000 and nothing is guessed.
// The fields are text fields (inputmode numeric), not type=number: Chromium's number field
// dropped a comma as it was typed and sent "1,5" as 15, so the server never saw what was typed.
// A plus sign is refused too ("+500" for 500), with its own reason: the separators' would
// mislead (core/errors/whole-number.ts).

/** A number field as typed: '' → null ("as the plan says"), otherwise a whole number. Each
 * form parses all its fields with one schema, so a refusal names every bad field at once.
 * `plusSign`: what a "+500" is told, when the field has more to say than "no + sign"; `max`:
 * the field's own bound, when smaller than a number's. */
const wholeNumberFieldSaying = (plusSign: string = NO_PLUS_SIGN, max?: number) => z
  .string()
  .optional()
  .transform((value, ctx) => {
    const v = (value ?? '').trim();
    if (v === '') return null;
    // Digits past what the field (or a number) holds are refused by that bound, not as a typo.
    const refusal = wholeNumberRefusal(v, max);
    if (refusal === null) return Number(v);
    ctx.addIssue({ code: 'custom', message: refusal === NO_PLUS_SIGN ? plusSign : refusal });
    return z.NEVER;
  });
const wholeNumberField = wholeNumberFieldSaying();

// Core refuses these fields one at a time (changeCredits, setCreditsPerPeriod, setCallsCap,
// setProductOverride), in these words: the forms check each field as core does first, so that
// every bad field is named at once. What needs the organization's rows (a balance's bound) is
// still core's to judge, once each field is sound.
const nonNegativeField = wholeNumberField.refine((n) => n === null || n >= 0, 'a non-negative integer');
const NON_ZERO = 'a non-zero integer';
const creditKinds = ['grant', 'top_up', 'adjustment'] as const satisfies readonly CreditChangeKind[];
const creditsFormSchema = z
  .object({
    kind: z.enum(creditKinds),
    credits: wholeNumberFieldSaying(CREDITS_PLUS_SIGN).pipe(z.number({ error: NON_ZERO }).refine((n) => n !== 0, NON_ZERO)),
    reason: z.string().default('').refine((r) => r.trim() !== '', 'required').refine((r) => r.length <= MAX_REASON, `at most ${MAX_REASON} characters`),
    // Optional, as the CLI's --reference: trimmed, and checked as referencedEventId checks it
    // (which still has the last word). Left blank, the change is one of its own, as without it.
    reference: z
      .string()
      .default('')
      .transform((r) => r.trim())
      .refine((r) => r.length <= MAX_REFERENCE, `at most ${MAX_REFERENCE} characters`)
      .refine((r) => !holdsControlCharacter(r), CONTROL_MESSAGE)
      .transform((r) => (r === '' ? null : r)),
  })
  .superRefine(({ kind, credits }, ctx) => {
    if (kind !== 'adjustment' && credits < 0) ctx.addIssue({ code: 'custom', path: ['credits'], message: 'must be positive' });
  });
const periodFormSchema = z.object({
  creditsPerPeriod: nonNegativeField.refine((n) => n === null || n <= MAX_CREDITS_PER_PERIOD, `at most ${MAX_CREDITS_PER_PERIOD}`),
  callsCap: nonNegativeField,
});
// Each limit as a plan's is (positive, fits its column), on its own, so that every bad field is
// named; how they stand together is core's to judge (setOrganizationLimits), once each is sound.
const rateLimit = planDefinitionSchema.shape.limits.shape.perSecond.nullable();
const limitField = wholeNumberFieldSaying(NO_PLUS_SIGN, MAX_RATE_LIMIT).pipe(rateLimit);
const limitsFormSchema = z.object({ perSecond: limitField, burst: limitField, perMinute: limitField });
// Empty unit: as the plan says; a unit the form does not offer is refused, and so is a product
// the catalogue does not have, before the save compares anything with what the page showed.
// "Back to plan" reads only the product: a bad measure typed beside it is not what it saves.
const productResetSchema = z.object({ product: z.string().default('').refine((p) => findProduct(p) !== undefined, 'not in the product catalogue') });
// A price above MAX_USAGE_QUANTITY could not be charged (core refuses it too).
const productFormSchema = productResetSchema.extend({
  quantity: nonNegativeField.refine((n) => n === null || n <= MAX_USAGE_QUANTITY, `at most ${MAX_USAGE_QUANTITY}`),
  unit: z.enum(['', 'credits', 'calls']).default('').transform((u) => (u === '' ? null : u)),
});

/**
 * The organization's settings before a form changes them, its row locked: a form saved again
 * unchanged (a double-click on Save, a re-sent page) changes nothing and so writes no activity
 * row, and of two saves at once the second sees the first's values.
 */
async function lockedSettings(trx: Db, orgId: string) {
  const row = await trx('organizations').where({ id: orgId }).forUpdate()
    .first<{ plan_id: string | null; credits_per_period: number | null; rate_per_second: number | null; burst: number | null; rate_per_minute: number | null } | undefined>(
      'plan_id', 'credits_per_period', 'rate_per_second', 'burst', 'rate_per_minute',
    );
  if (!row) throw new AppError('not_found', `No organization with id ${orgId}.`);
  return row;
}

/** A refused form: what it had typed, shown again in its fields (only that form's fields are
 * in it), and why each field was refused, shown under it. */
interface Refused {
  typed: Partial<Record<string, string>>;
  refusals: Partial<Record<string, string>>;
  /** The organization whose name the create form's was (shown linked, with a way to go ahead). */
  nameTakenBy?: { id: string; name: string };
}

const noRefusal: Refused = { typed: {}, refusals: {} };

const organizationPath = (orgId: string) => `/operator/organizations/${orgId}`;
const createdPath = (orgId: string) => `${organizationPath(orgId)}?done=created`;

/** Under the create form's name: which organization has it, linked, and how to make another. */
function nameTakenRefusal({ t }: DashboardState, existing: { id: string; name: string }): Html {
  const [before, after] = t('operator.nameTaken').split('{organization}');
  return html`${before}<a href="${organizationPath(existing.id)}">${existing.name}</a> (<code>${existing.id}</code>)${after}`;
}

async function renderOverview(ctx: DashboardContext, db: Db, top?: HtmlValue, { typed, refusals, nameTakenBy: taken }: Refused = noRefusal): Promise<void> {
  const { t, f } = ctx.state;
  await ensureDefaultPlans(db);
  const search = typeof ctx.query.q === 'string' ? ctx.query.q.slice(0, 200) : '';
  const requested = Number.parseInt(String(ctx.query.page ?? '1'), 10);
  const [overview, plans, deadLetters] = await Promise.all([organizationsOverview(db, { search, page: requested }), listPlans(db), countOpenDeadLetters(db)]);
  const { totals } = overview;
  // As the rows say it: every organization whose row is not "Active" (a flag up, or a balance too
  // low for some products), with how many show each.
  const attention = totals.notActive;
  const link = (p: number) => `/operator?${new URLSearchParams({ ...(search ? { q: search } : {}), page: String(p) })}`;
  const rows = overview.rows.map((o) => [
    html`<a href="/operator/organizations/${o.id}"><strong>${o.name}</strong></a><div class="muted small"><code>${o.id}</code></div>`,
    o.planName ?? html`<span class="muted">${t('operator.noPlan')}</span>`,
    o.creditsBalance === null ? '—' : f.number(o.creditsBalance),
    o.callsUsed === null ? '—' : `${f.number(o.callsUsed)} / ${o.callsCap === null ? '∞' : f.number(o.callsCap)}`,
    statusBadges(ctx.state, { ...o, unprovisioned: o.planId === null }),
    String(o.members),
    String(o.activeKeys),
  ]);
  const body = html`
    ${top ?? ''}
    <div class="stats">
      ${stat(t('nav.organizations'), f.number(totals.organizations))}
      ${stat(t('operator.flags'), f.number(attention), attention > 0 ? t('operator.totals', { orgs: f.number(totals.organizations), flagged: f.number(totals.flagged), low: f.number(totals.someProductsRefused), unprovisioned: f.number(totals.unprovisioned), count: totals.organizations }) : '')}
      ${stat(t('operator.balance'), f.number(totals.creditsBalance), unitWord(ctx.state, 'credits', totals.creditsBalance))}
      ${stat(t('operator.deadLetters'), f.number(deadLetters), deadLetters > 0 ? t('operator.deadLettersHint') : t('operator.deadLettersNone'))}
    </div>
    ${asOfStamp(ctx.state, totals.newestEventAt)}
    ${section(t('operator.create'), html`<form method="post" action="/operator/organizations" class="form-row">
      ${csrfField(ctx.state)}${submissionField()}
      ${field({ label: t('common.name'), name: 'name', required: true, value: typed.name ?? null, id: 'org-name', error: taken ? nameTakenRefusal(ctx.state, taken) : refusals.name })}
      ${select({ label: t('operator.plan'), name: 'planId', choices: [...plans.map((p) => ({ value: p.id, label: `${p.name} (${p.id})` })), { value: '', label: t('operator.noPlan') }], value: typed.planId ?? plans[0]?.id ?? '', id: 'org-plan' })}
      <div class="field field-button"><button class="btn btn-primary" type="submit">${t('operator.createButton')}</button></div>
      ${taken ? html`<div class="field field-full"><label class="check"><input type="checkbox" name="allowDuplicateName" value="1" id="org-allow-duplicate"> <span>${t('operator.allowDuplicateName')}</span></label></div>` : ''}
    </form>`, { id: 'create-org' })}
    ${section(t('operator.title'), html`<form method="get" action="/operator" class="toolbar" role="search">
        <label for="org-search">${t('operator.search')}</label>
        <input id="org-search" type="search" name="q" value="${search}" placeholder="${t('operator.searchPlaceholder')}">
        <button type="submit" class="btn btn-secondary">${t('common.show')}</button>
      </form>
      ${table({
        caption: t('operator.title'),
        headers: [t('common.name'), t('operator.plan'), t('operator.balance'), t('operator.calls'), t('operator.flags'), t('operator.members'), t('operator.keys')],
        rows,
        numeric: [2, 3, 5, 6],
        empty: search ? t('operator.noMatch', { search }) : t('common.noRows'),
      })}
      ${overview.pages > 1 ? pagination(ctx.state, overview, link, 'organizations') : ''}`, { id: 'all-orgs' })}`;
  // After a form's POST too, the language switch comes back to the page, not to the form's address.
  ctx.body = page(ctx.state, { title: t('operator.title'), body, active: 'operator', path: '/operator' });
}

/**
 * An organization's status as the operator pages say it: each flag up, a balance too low for
 * some products, no plan (every call refused with 403 client_not_configured), or else "Active".
 */
function statusBadges({ t }: DashboardState, s: { creditsExhausted: boolean; limitReached: boolean; someProductsRefused: boolean; unprovisioned: boolean }): Html {
  const shown = [
    s.unprovisioned ? badge(t('operator.unprovisioned'), 'bad') : '',
    s.creditsExhausted ? badge(t('overview.flag.credits_exhausted'), 'bad') : '',
    s.limitReached ? badge(t('overview.flag.limit_reached'), 'bad') : '',
    s.someProductsRefused ? badge(t('overview.flag.someRefused'), 'warn') : '',
  ].filter((b) => b !== '');
  return html`${shown.length > 0 ? shown : badge(t('overview.flagOk'), 'good')}`;
}

/** A calls cap as the operator pages say it. */
const capText = ({ t, f }: DashboardState, cap: number | null) => (cap === null ? t('common.noCap') : f.number(cap));

/**
 * The period form's cap field shows the cap later months get (the organization's own, else its
 * plan's), the one a save changes: this period's, when a cap set for this period only makes it
 * differ, is said beside it, not put in the field, where saving the form unchanged made it the
 * organization's own cap.
 */
function callsCapHelp(state: DashboardState, terms: CallsCapTerms): string {
  const { t, f } = state;
  const source = terms.own ? t('operator.org.callsCapOwn') : terms.planId ? t('operator.org.callsCapPlan', { plan: terms.planId }) : '';
  const thisPeriod = terms.thisPeriod !== terms.laterPeriods
    ? t('operator.org.callsCapThisPeriod', { cap: terms.thisPeriod === null ? t('common.noCap') : f.number(terms.thisPeriod) })
    : '';
  return [thisPeriod, source, t('operator.org.callsCapHelp')].filter((part) => part !== '').join(' ');
}

async function renderOrganization(ctx: DashboardContext, db: Db, organizationId: string, top?: HtmlValue, { typed, refusals }: Refused = noRefusal): Promise<void> {
  const { t, f } = ctx.state;
  // The activity first: its newest row, carried by the settings forms, is then no newer than the
  // values the forms show, so that a change made in between is one the save's check names.
  const audit = await recentAudit(db, organizationId);
  const auditId = audit[0]?.id ?? 0;
  const [org, plans, periodSettings, capTerms] = await Promise.all([
    getOrganization(db, organizationId), listPlans(db), organizationPeriodSettings(db, organizationId), callsCapTerms(db, organizationId),
  ]);
  const shown = shownFields(periodForm, { creditsPerPeriod: periodSettings.creditsPerPeriod, cap: capTerms }, auditId, typed);
  const plan = org.planId ? await getPlan(db, org.planId) : null;
  const planProducts = new Map((plan?.products ?? []).map((p) => [p.product, p]));
  const overrides = new Map(org.productOverrides.map((o) => [o.product, o]));
  const limits = plan?.limits;
  const a = org.allowance;
  const productRows = productCatalogue.map((p) => {
    const inPlan = planProducts.get(p.slug);
    const override = overrides.get(p.slug);
    const effective = org.products.get(p.slug);
    const id = `prod-${p.slug}`;
    // The row whose form was refused shows what was typed in it, and why.
    const refused = typed.product === p.slug;
    const enabled = refused ? typed.enabled === '1' : effective !== undefined;
    const quantity = refused ? (typed.quantity ?? '') : String(effective?.measure.quantity ?? p.defaultMeasure.quantity);
    const unit = refused ? typed.unit : (effective?.measure.unit ?? p.defaultMeasure.unit);
    const errors = refused ? { quantity: refusals.quantity, unit: refusals.unit } : {};
    return [
      html`<code>${p.slug}</code>${override ? html` ${badge(t('operator.org.override'), 'info')}` : ''}`,
      p.kind,
      inPlan ? t('operator.org.planDefault', { measure: measure(ctx.state, inPlan.quantity, inPlan.unit) }) : html`<span class="muted">${t('operator.org.notInPlan')}</span>`,
      html`<form method="post" action="/operator/organizations/${org.id}/products" class="product-form">
        ${csrfField(ctx.state)}<input type="hidden" name="product" value="${p.slug}">${shownFields(productForm(p.slug), { product: p.slug, planId: org.planId, plan: inPlan ?? null, override: override ?? null }, auditId, typed)}
        <label class="check"><input type="checkbox" name="enabled" value="1"${enabled ? html` checked` : ''}> <span>${t('operator.org.enabled')}</span></label>
        <label class="visually-hidden" for="${id}-q">${t('report.quantity')} ${p.slug}</label>
        <input id="${id}-q" class="input-sm" type="text" inputmode="numeric" name="quantity" value="${quantity}"${fieldAttributes(`${id}-q`, { error: errors.quantity })}>
        <label class="visually-hidden" for="${id}-u">${t('report.unit')} ${p.slug}</label>
        <select id="${id}-u" name="unit"${fieldAttributes(`${id}-u`, { error: errors.unit })}>${(['credits', 'calls'] as const).map((u) => html`<option value="${u}"${unit === u ? html` selected` : ''}>${t(`common.${u}`)}</option>`)}</select>
        <button class="btn btn-secondary btn-sm" type="submit">${t('common.save')}</button>
        ${override ? html`<button class="btn btn-ghost btn-sm" type="submit" name="reset" value="1">${t('operator.org.reset')}</button>` : ''}
        ${fieldError(`${id}-q`, errors.quantity)}${fieldError(`${id}-u`, errors.unit)}
      </form>`,
    ];
  });
  // As on the organization's own overview: a balance below some products' prices, flag down
  // (the flag is only for "not even the cheapest"), is not "OK" to the operator about to top up.
  const someRefused = a !== null && !a.creditsExhausted && coverageOf(org.products, a.creditsBalance).refused.length > 0;
  const body = html`
    ${top ?? ''}
    <p><a href="/orgs/${org.id}">${t('operator.org.openDashboard')} →</a> <span class="muted small"><code>${org.id}</code></span></p>
    ${a ? html`<div class="stats">
      ${stat(t('overview.balance'), f.number(a.creditsBalance), unitWord(ctx.state, 'credits', a.creditsBalance))}
      ${stat(t('overview.callsUsed'), a.callsCap === null ? f.number(a.callsUsed) : t('overview.callsOfCap', { used: f.number(a.callsUsed), cap: f.number(a.callsCap) }), f.period(a.period))}
      ${stat(t('overview.flags'), statusBadges(ctx.state, { ...a, someProductsRefused: someRefused, unprovisioned: org.planId === null }))}
    </div>` : ''}
    <div class="grid-2">
      ${section(t('operator.org.plan'), html`<form method="post" action="/operator/organizations/${org.id}/plan" class="stack">
        ${csrfField(ctx.state)}${shownFields(planForm, { planId: org.planId }, auditId, typed)}
        ${select({ label: t('operator.plan'), name: 'planId', choices: [{ value: '', label: t('operator.noPlan') }, ...plans.map((p) => ({ value: p.id, label: `${p.name} (${p.id})` }))], value: typed.planId ?? org.planId ?? '', help: t('operator.org.planHelp'), id: 'plan-select' })}
        <div><button class="btn btn-primary" type="submit">${t('common.save')}</button></div>
      </form>`, { id: 'org-plan' })}
      ${section(t('operator.org.grant'), html`<form method="post" action="/operator/organizations/${org.id}/credits" class="stack">
        ${csrfField(ctx.state)}${submissionField()}
        ${select({ label: t('operator.org.grantKind'), name: 'kind', choices: creditKinds.map((k) => ({ value: k, label: t(`operator.org.kind.${k}`) })), value: typed.kind ?? 'grant', id: 'grant-kind' })}
        ${field({ label: t('operator.org.credits'), name: 'credits', required: true, value: typed.credits ?? null, id: 'grant-credits', error: refusals.credits })}
        ${field({ label: t('operator.org.reason'), name: 'reason', required: true, value: typed.reason ?? null, help: t('operator.org.reasonHelp'), id: 'grant-reason', error: refusals.reason })}
        ${field({ label: t('operator.org.reference'), name: 'reference', value: typed.reference ?? null, help: t('operator.org.referenceHelp'), id: 'grant-reference', error: refusals.reference })}
        <div><button class="btn btn-primary" type="submit">${t('operator.org.grant')}</button></div>
      </form>`, { id: 'org-grant' })}
      ${section(t('operator.org.period'), html`<form method="post" action="/operator/organizations/${org.id}/period" class="stack">
        ${csrfField(ctx.state)}${shown}
        ${field({ label: t('operator.org.creditsPerPeriod'), name: 'creditsPerPeriod', inputmode: 'numeric', value: typed.creditsPerPeriod ?? periodSettings.creditsPerPeriod, help: `${t('operator.org.creditsPerPeriodHelp')}${plan ? ` (${f.number(plan.creditsPerPeriod)})` : ''}`, id: 'credits-per-period', error: refusals.creditsPerPeriod })}
        ${field({ label: t('operator.org.callsCap'), name: 'callsCap', inputmode: 'numeric', value: typed.callsCap ?? capTerms.laterPeriods, help: callsCapHelp(ctx.state, capTerms), id: 'calls-cap', error: refusals.callsCap })}
        <div><button class="btn btn-primary" type="submit">${t('common.save')}</button></div>
      </form>
      ${capTerms.planId && (capTerms.own || (capTerms.period !== null && capTerms.thisPeriod !== capTerms.planCallsCap)) ? html`<form method="post" action="/operator/organizations/${org.id}/calls-cap/plan" class="stack" id="use-plan-cap">
        ${csrfField(ctx.state)}${shown}
        <p class="muted small">${t(capTerms.own ? 'operator.org.usePlanCapHelp' : 'operator.org.usePlanCapThisPeriodHelp', { plan: capTerms.planId })}</p>
        <div><button class="btn btn-secondary" type="submit">${t('operator.org.usePlanCap', { cap: capText(ctx.state, capTerms.planCallsCap) })}</button></div>
      </form>` : ''}`, { id: 'org-period' })}
      ${section(t('operator.org.limits'), html`<form method="post" action="/operator/organizations/${org.id}/limits" class="stack">
        ${csrfField(ctx.state)}${shownFields(limitsForm, { overrides: org.limitOverrides, plan: limits ?? null }, auditId, typed)}
        <p class="muted small">${limits ? t('operator.org.limitsHelp', { perSecond: limits.perSecond, burst: limits.burst, perMinute: limits.perMinute }) : ''}</p>
        <div class="form-row">
          ${field({ label: t('operator.org.perSecond'), name: 'perSecond', inputmode: 'numeric', value: typed.perSecond ?? org.limitOverrides.perSecond, id: 'limit-second', error: refusals.perSecond })}
          ${field({ label: t('operator.org.burst'), name: 'burst', inputmode: 'numeric', value: typed.burst ?? org.limitOverrides.burst, id: 'limit-burst', error: refusals.burst })}
          ${field({ label: t('operator.org.perMinute'), name: 'perMinute', inputmode: 'numeric', value: typed.perMinute ?? org.limitOverrides.perMinute, id: 'limit-minute', error: refusals.perMinute })}
        </div>
        <div><button class="btn btn-primary" type="submit">${t('common.save')}</button></div>
      </form>`, { id: 'org-limits' })}
    </div>
    ${section(t('operator.org.products'), table({ caption: t('operator.org.products'), headers: [t('operator.org.product'), t('operator.org.kind'), t('operator.plan'), t('operator.org.measure')], rows: productRows, empty: '' }), { id: 'org-products' })}
    ${inviteForm(ctx.state, `/operator/organizations/${org.id}/invite`, { roles: ['admin', 'finance'], title: t('operator.org.inviteAdmin'), typed, refusals })}
    ${section(t('operator.org.audit'), table({
      caption: t('operator.org.audit'),
      headers: [t('report.at'), t('report.by'), t('ledger.what')],
      rows: audit.map((x) => [f.dateTime(x.at), auditActor(ctx.state, x), describeAuditAction(ctx.state, x)]),
      empty: t('common.noRows'),
    }), { id: 'org-audit', actions: html`<a href="/orgs/${org.id}/activity">${t('nav.activity')} →</a>` })}`;
  ctx.body = page(ctx.state, { title: org.name, body, active: 'operator', path: `/operator/organizations/${org.id}` });
}

export function registerOperatorRoutes(router: Router<DashboardState>, deps: OperatorRouteDeps): void {
  const { db } = deps;

  // Validation problems come back to the same page as a message (422); everything else is a bug.
  const refuse = async (ctx: DashboardContext, organizationId: string | null, err: unknown) => {
    if (err instanceof FormChanged && organizationId) {
      // Nothing saved: the form comes back with what was typed in it, drawn over the values as
      // they are now (its hidden fields too), so that saving it again is a choice made knowing them.
      ctx.status = 409;
      const typed = Object.fromEntries(Object.entries(ctx.state.form).filter(([name]) => !err.fields.includes(name)));
      return renderOrganization(ctx, db, organizationId, notice(await changedNotice(ctx.state, db, organizationId, err, ctx.state.form), 'warn'), { typed, refusals: {} });
    }
    if (!(err instanceof AppError && err.code === 'invalid_params')) throw err;
    ctx.status = 422;
    const top = notice(ctx.state.t('error.invalid', { message: invalidInputMessage(ctx.state, err) }), 'bad');
    // The refused form comes back as it was typed, with why under each refused field.
    const refused: Refused = { typed: ctx.state.form, refusals: fieldRefusals(ctx.state, err) };
    if (organizationId) return renderOrganization(ctx, db, organizationId, top, refused);
    const takenBy = nameTakenBy(err);
    if (takenBy) refused.nameTakenBy = { id: takenBy, name: (await getOrganization(db, takenBy)).name };
    await renderOverview(ctx, db, top, refused);
  };

  const guarded = async (ctx: DashboardContext, organizationId: string | null, action: () => Promise<HtmlValue | void>) => {
    try {
      const top = (await action()) ?? notice(ctx.state.t('operator.org.saved'), 'good');
      if (organizationId) await renderOrganization(ctx, db, organizationId, top);
      else await renderOverview(ctx, db, top);
    } catch (err) {
      await refuse(ctx, organizationId, err);
    }
  };

  router.get('/operator', async (ctx) => {
    requireOperator(ctx);
    await renderOverview(ctx, db, ctx.query.done === 'repeated' ? notice(ctx.state.t('form.repeated'), 'info') : undefined);
  });

  router.post('/operator/organizations', async (ctx) => {
    const actor = requireOperator(ctx);
    // Ticked only on the form shown again after its name was refused as another organization's.
    const { name = '', planId = '', allowDuplicateName } = ctx.state.form;
    let answer: string | undefined;
    await guarded(ctx, null, async () => {
      const org = await withAudit(
        db,
        async (trx) => {
          if (!(await claimSubmission(trx, ctx))) return null; // sent before (a double-click): no second organization
          const o = await createOrganization(trx, { name, planId: planId || null, actor, allowDuplicateName: allowDuplicateName === '1' });
          await keepAnswer(trx, ctx, createdPath(o.id));
          return o;
        },
        (o) => o && { organizationId: o.id, actor, action: 'organization.created', details: { name: o.name, planId: o.planId } },
      );
      // A repeat goes to the organization the first one made; were that answer not kept (a
      // newer one of this form replaced it), to the list, which says the form had been sent.
      answer = org ? createdPath(org.id) : ((await keptAnswer(db, ctx)) ?? '/operator?done=repeated');
    });
    if (answer) ctx.redirect(answer);
  });

  router.get('/operator/organizations/:orgId', async (ctx) => {
    requireOperator(ctx);
    const orgId = ctx.params.orgId!;
    const invitation = await takeFlash(db, ctx.state.sessionToken!, organizationPath(orgId), invitationFlashSchema);
    if (invitation) return renderOrganization(ctx, db, orgId, invitationPanel(ctx, invitation, { publicUrl: deps.publicUrl }));
    const done = ctx.query.done === 'repeated' ? notice(ctx.state.t('form.repeated'), 'info')
      : ctx.query.done === 'created' ? notice(ctx.state.t('operator.org.created'), 'good')
        : ctx.query.done ? notice(ctx.state.t('operator.org.saved'), 'good') : undefined;
    await renderOrganization(ctx, db, orgId, done);
  });

  router.post('/operator/organizations/:orgId/plan', async (ctx) => {
    const actor = requireOperator(ctx);
    const orgId = ctx.params.orgId!;
    await guarded(ctx, orgId, async () => {
      const planId = ctx.state.form.planId || null;
      await withAudit(
        db,
        async (trx) => {
          const before = await lockedSettings(trx, orgId);
          // Saved only over the plan the page showed (form-version.ts); the plan it is on now, whatever the page showed, changes nothing.
          refuseIfChanged(planForm, { planId: before.plan_id }, ctx.state.form, before.plan_id !== planId);
          await setOrganizationPlan(trx, orgId, planId, actor);
          return before.plan_id !== planId;
        },
        (changed) => (changed ? { organizationId: orgId, actor, action: 'organization.plan_set', details: { planId } } : null),
      );
    });
  });

  router.post('/operator/organizations/:orgId/credits', async (ctx) => {
    const actor = requireOperator(ctx);
    const orgId = ctx.params.orgId!;
    await guarded(ctx, orgId, async () => {
      // A kind the form does not offer is refused, not booked as a grant.
      const { kind, credits, reason, reference } = parseInput(creditsFormSchema, ctx.state.form);
      // With a reference, the change happens once, as `billing top-up --reference` does: the same
      // reference again (another form, another operator, or the CLI) books nothing, and with
      // another amount it is refused under the field. The submission token still answers a
      // double-click of this form, before the reference is looked at.
      const eventId = reference === null ? undefined : referencedEventId(kind, orgId, reference);
      const snapshot = await withAudit(
        db,
        async (trx) => (await claimSubmission(trx, ctx)) ? changeCredits(trx, { organizationId: orgId, kind, credits, actor, reason, eventId }) : null,
        (s) => (s && !s.alreadyRecordedAt ? { organizationId: orgId, actor, action: `credits.${kind}`, details: { credits, reason, ...(reference === null ? {} : { reference }) } } : null),
      );
      if (snapshot?.alreadyRecordedAt) {
        return notice(ctx.state.t('operator.org.referenceRepeated', { reference: reference!, time: ctx.state.f.dateTime(snapshot.alreadyRecordedAt), balance: ctx.state.f.number(snapshot.creditsBalance) }), 'info');
      }
      if (snapshot) return notice(ctx.state.t('operator.org.granted', { balance: ctx.state.f.number(snapshot.creditsBalance) }), 'good');
      // Sent before (a double-click, or a reload of this answer): booked once. Not the generic
      // "nothing new was made", which an operator seeing only this answer could read as "not
      // booked" and book again; the balance shown is the one with the first booking in it.
      const balance = (await getOrganization(db, orgId)).allowance?.creditsBalance ?? 0;
      return notice(ctx.state.t('operator.org.grantRepeated', { balance: ctx.state.f.number(balance) }), 'info');
    });
  });

  router.post('/operator/organizations/:orgId/period', async (ctx) => {
    const actor = requireOperator(ctx);
    const orgId = ctx.params.orgId!;
    await guarded(ctx, orgId, async () => {
      const { creditsPerPeriod, callsCap } = parseInput(periodFormSchema, ctx.state.form);
      // One form, one transaction: a cap refused after the credits were saved would leave half
      // the form applied behind a 422. Saved only over the values the page showed (nothing, and
      // the form again, when they changed since). Each field is compared with what the form
      // shows for it (the organization's credits per period; the cap of later months), so a
      // field saved as it was changes nothing, and the activity row names only what changed.
      await withAudit(
        db,
        async (trx) => {
          const before = await lockedSettings(trx, orgId);
          const now = { creditsPerPeriod: before.credits_per_period, cap: await callsCapTerms(trx, orgId) };
          refuseIfChanged(periodForm, now, ctx.state.form, now.creditsPerPeriod !== creditsPerPeriod || now.cap.laterPeriods !== callsCap);
          const changed: { creditsPerPeriod?: number | null; callsCap?: number | null } = {};
          if (before.credits_per_period !== creditsPerPeriod) {
            await setCreditsPerPeriod(trx, orgId, creditsPerPeriod);
            changed.creditsPerPeriod = creditsPerPeriod;
          }
          if (now.cap.laterPeriods !== callsCap) {
            await setCallsCap(trx, { organizationId: orgId, callsCap, actor, reason: OPERATOR_DASHBOARD_REASON });
            changed.callsCap = callsCap;
          }
          return Object.keys(changed).length > 0 ? changed : null;
        },
        (details) => (details ? { organizationId: orgId, actor, action: 'organization.period_set', details } : null),
      );
    });
  });

  // The organization's own cap dropped for its plan's, this period and later ones, as
  // `billing set-cap --calls plan` does: a ledger row and an activity row when anything changed.
  router.post('/operator/organizations/:orgId/calls-cap/plan', async (ctx) => {
    const actor = requireOperator(ctx);
    const orgId = ctx.params.orgId!;
    await guarded(ctx, orgId, async () => {
      const back = await withAudit(
        db,
        async (trx) => {
          const before = await lockedSettings(trx, orgId);
          // The button names the cap and plan the page showed: pressed over values changed since,
          // it changes nothing, unless there is nothing to undo anyway (usePlanCallsCap's own
          // test: no own cap, and this month's the plan's), as for the second of a double-click.
          const cap = await callsCapTerms(trx, orgId);
          refuseIfChanged(periodForm, { creditsPerPeriod: before.credits_per_period, cap }, ctx.state.form, cap.own || cap.thisPeriod !== cap.planCallsCap);
          return usePlanCallsCap(trx, { organizationId: orgId, actor, reason: OPERATOR_DASHBOARD_REASON });
        },
        (s) => s && { organizationId: orgId, actor, action: 'allowance.cap_plan', details: { planId: s.planId, callsCap: s.callsCap } },
      );
      if (back) return notice(ctx.state.t('operator.org.planCapUsed', { plan: back.planId, cap: capText(ctx.state, back.callsCap) }), 'good');
    });
  });

  router.post('/operator/organizations/:orgId/limits', async (ctx) => {
    const actor = requireOperator(ctx);
    const orgId = ctx.params.orgId!;
    await guarded(ctx, orgId, async () => {
      const limits = parseInput(limitsFormSchema, ctx.state.form);
      await withAudit(
        db,
        async (trx) => {
          const before = await lockedSettings(trx, orgId);
          // Saved only over the limits the page showed (form-version.ts), the plan's among them:
          // they are what an empty field stands for.
          const overrides = { perSecond: before.rate_per_second, burst: before.burst, perMinute: before.rate_per_minute };
          const plan = before.plan_id ? (await getPlan(trx, before.plan_id)).limits : null;
          const changes = overrides.perSecond !== limits.perSecond || overrides.burst !== limits.burst || overrides.perMinute !== limits.perMinute;
          refuseIfChanged(limitsForm, { overrides, plan }, ctx.state.form, changes);
          const after = await setOrganizationLimits(trx, orgId, limits);
          return before.rate_per_second !== after.perSecond || before.burst !== after.burst || before.rate_per_minute !== after.perMinute;
        },
        (changed) => (changed ? { organizationId: orgId, actor, action: 'organization.limits_set', details: limits } : null),
      );
    });
  });

  router.post('/operator/organizations/:orgId/products', async (ctx) => {
    const actor = requireOperator(ctx);
    const orgId = ctx.params.orgId!;
    await guarded(ctx, orgId, async () => {
      const { enabled, reset } = ctx.state.form;
      const { product } = parseInput(productResetSchema, ctx.state.form);
      const measured = reset ? null : parseInput(productFormSchema, ctx.state.form);
      await withAudit(
        db,
        async (trx) => {
          const before = await lockedSettings(trx, orgId);
          // Saved only over the row the page showed (form-version.ts): this product's override and
          // its plan's measure; another product's changed meanwhile refuses nothing.
          const now = await productFormValues(trx, orgId, before.plan_id, product);
          if (!measured) {
            refuseIfChanged(productForm(product), now, ctx.state.form, now.override !== null);
            return (await clearProductOverride(trx, orgId, product)) ? { product } : null; // null: there was none
          }
          // The override as setProductOverride stores it: no measure for a product turned off.
          const on = enabled === '1';
          const next = { enabled: on, quantity: on ? measured.quantity : null, unit: on ? measured.unit : null };
          const was = now.override;
          // The same override saved again (a double-click on Save) changes nothing: nothing to log.
          // Nor does a row without one saved as its plan shows it (Save pressed on a row left
          // untouched): made an override, the plan's price would be pinned, and the organization
          // cut off from the plan's later prices for it.
          const same = was === null
            ? (now.plan ? next.enabled && next.quantity === now.plan.quantity && next.unit === now.plan.unit : !next.enabled)
            : was.enabled === next.enabled && was.quantity === next.quantity && was.unit === next.unit;
          refuseIfChanged(productForm(product), now, ctx.state.form, !same);
          if (same) return null;
          const set = await setProductOverride(trx, orgId, product, next);
          // The override as stored, as the CLI records it: numbers, not the form's text.
          return { product, enabled: set.enabled, quantity: set.quantity, unit: set.unit };
        },
        (details) => (details
          ? { organizationId: orgId, actor, action: reset ? 'organization.product_reset' : 'organization.product_set', details }
          : null),
      );
    });
  });

  router.post('/operator/organizations/:orgId/invite', async (ctx) => {
    const actor = requireOperator(ctx);
    const orgId = ctx.params.orgId!;
    let invitation: CreatedInvitation | null;
    try {
      invitation = await withAudit(
        db,
        async (trx) => {
          if (!(await claimSubmission(trx, ctx))) return null; // sent before (a double-click): no second invitation
          const i = await createInvitation(trx, { organizationId: orgId, email: ctx.state.form.email ?? '', role: ctx.state.form.role === 'finance' ? 'finance' : 'admin', invitedBy: actor });
          // 303 to the organization's page, which shows the link once: a reload there invites no
          // one again. Kept in this transaction, so that a repeat of the form finds it waiting.
          await putFlash(trx, ctx.state.sessionToken!, organizationPath(orgId), i, submissionOf(ctx));
          return i;
        },
        (i) => i && { organizationId: orgId, actor, action: 'member.invited', details: { email: i.email, role: i.role } },
      );
    } catch (err) {
      return refuse(ctx, orgId, err);
    }
    if (!invitation) return answerRepeated(db, ctx, organizationPath(orgId));
    ctx.redirect(organizationPath(orgId));
    ctx.status = 303;
  });
}
