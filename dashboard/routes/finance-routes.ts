import type { Router } from '@koa/router';
import { allowanceReportCsv, buildAllowanceReport, exportLedger, isPeriod, keyLabel, ledgerCsvLines, nextPeriod, periodStart, type AllowanceReport } from '../../core/billing/index.js';
import { AppError } from '../../core/errors/index.js';
import type { Db } from '../../core/db/index.js';
import { allowanceGlance, BURN_WINDOW_DAYS, type AllowanceGlance, type CreditPricedProduct, ledgerEntryTypes, ledgerPage, ledgerPeriods, type LedgerEntryType, type LedgerPageRow } from '../../core/finance/index.js';
import { csvFile, csvSeparator, csvSeparatorChoice, csvStream, sendAsCsv } from '../csv-download.js';
import { orgAccess } from '../org-access.js';
import type { Formats } from '../i18n/translate.js';
import type { DashboardContext, DashboardState } from '../state.js';
import { barList, columnChart, type ChartPoint } from '../views/charts.js';
import { asOfStamp, badge, section, stat, table } from '../views/components.js';
import { rowPager, rowPagerPosition, rowPagerQuery, type RowPagerTarget } from '../views/row-pager.js';
import { html, type Html } from '../views/html.js';
import { page } from '../views/layout.js';
import { PERIOD_MESSAGE } from '../views/invalid-input.js';
import { flagReason, ledgerActor, ledgerReason } from '../views/ledger-reasons.js';
import { measure, unitWord } from '../views/units.js';

export interface FinanceRouteDeps {
  db: Db;
}

type Measure = 'credits' | 'calls';
type View = 'day' | 'product' | 'key';

const currentPeriod = (now = new Date()) => now.toISOString().slice(0, 7);

/** The months the selector offers: those with ledger rows, the current one, and the one shown
 * (a month without rows asked for in the address: the selector must not claim another). */
async function periodChoices(db: Db, organizationId: string, shown: string | null = null): Promise<string[]> {
  const periods = new Set([currentPeriod(), ...(shown ? [shown] : []), ...(await ledgerPeriods(db, organizationId))]);
  return [...periods].sort().reverse();
}

/**
 * The month the address asks for (`?period=YYYY-MM`), or null when it names none. A month that
 * is malformed, out of range or not begun yet is refused (422), as `cli report` refuses it: a
 * bookmark or script with a typo must not get another month's report under the name it asked.
 */
function askedPeriod(ctx: DashboardContext): string | null {
  const p = ctx.query.period;
  if (p === undefined || p === '') return null;
  if (typeof p === 'string' && isPeriod(p) && p <= currentPeriod()) return p;
  throw new AppError('invalid_params', `period: ${PERIOD_MESSAGE}`, {
    details: [{ path: 'period', message: PERIOD_MESSAGE }],
  });
}

/** The month asked for, else the current one. */
const chosenPeriod = (ctx: DashboardContext): string => askedPeriod(ctx) ?? currentPeriod();

/** The ledger page's filters, which its download reads too, so the file is what the page lists:
 * a month (null: all) and an entry type (null: all; one the page does not offer, as all). */
function ledgerFilters(ctx: DashboardContext): { period: string | null; type: LedgerEntryType | null } {
  const period = askedPeriod(ctx);
  const type = (ledgerEntryTypes as readonly string[]).includes(String(ctx.query.type)) ? (ctx.query.type as LedgerEntryType) : null;
  return { period, type };
}

const ledgerQuery = (filters: { period: string | null; type: LedgerEntryType | null }, extra: Record<string, string> = {}) =>
  new URLSearchParams({ ...(filters.period ? { period: filters.period } : {}), ...(filters.type ? { type: filters.type } : {}), ...extra }).toString();

function periodSelector(state: DashboardState, action: string, periods: string[], current: string, hidden: Record<string, string> = {}): Html {
  const { t, f } = state;
  return html`<form method="get" action="${action}" class="toolbar">
    ${Object.entries(hidden).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
    <label for="period">${t('common.period')}</label>
    <select id="period" name="period">${periods.map((p) => html`<option value="${p}"${p === current ? html` selected` : ''}>${f.period(p)} (${p})</option>`)}</select>
    <button type="submit" class="btn btn-secondary">${t('common.show')}</button>
  </form>`;
}

/** A flag by the name the overview gives it; one the catalogues do not know, by its code. */
const flagName = (state: DashboardState, flag: string): string =>
  flag === 'credits_exhausted' || flag === 'limit_reached' ? state.t(`overview.flag.${flag}`) : flag;

/** Every day of the period up to today (UTC), zeros included, so gaps show as gaps. */
function dailyPoints(report: AllowanceReport, measure: Measure, f: Formats, now = new Date()): ChartPoint[] {
  const values = new Map<string, number>();
  for (const d of report.byDay) {
    const v = measure === 'calls' ? d.calls : d.unit === 'credits' ? d.quantity : 0;
    values.set(d.day, (values.get(d.day) ?? 0) + v);
  }
  const points: ChartPoint[] = [];
  const end = Math.min(periodStart(nextPeriod(report.period)).getTime(), now.getTime() + 1);
  for (let t = periodStart(report.period).getTime(); t < end; t += 86_400_000) {
    const day = new Date(t).toISOString().slice(0, 10);
    points.push({ label: f.day(day), tick: f.dayMonth(new Date(t)), value: values.get(day) ?? 0 });
  }
  return points;
}

function groupedPoints(lines: { label: string; quantity: number; unit: string; calls: number }[], measure: Measure): ChartPoint[] {
  const values = new Map<string, number>();
  for (const l of lines) values.set(l.label, (values.get(l.label) ?? 0) + (measure === 'calls' ? l.calls : l.unit === 'credits' ? l.quantity : 0));
  return [...values].map(([label, value]) => ({ label, value })).sort((a, b) => b.value - a.value);
}

/** The burn rate, and since when it is counted: the first use of the window, not always its start. */
function burnRate(state: DashboardState, glance: AllowanceGlance): string {
  const { t, f } = state;
  if (glance.burnSince === null) return t('overview.burnNone', { days: BURN_WINDOW_DAYS });
  return t('overview.burn', { credits: measure(state, glance.creditsPerDay, 'credits'), calls: measure(state, glance.callsPerDay, 'calls'), since: f.dateTime(glance.burnSince), days: BURN_WINDOW_DAYS });
}

/** The calls cap: reached, once the flag is up or the count is at it (not a forecast of today);
 * else when it will be at the burn rate, if within this period; nothing without a cap. */
function capLine(state: DashboardState, glance: AllowanceGlance): Html | string {
  const { t, f } = state;
  if (glance.callsCap === null) return '';
  if (glance.limitReached || glance.callsUsed >= glance.callsCap) return html`<br>${t('overview.capReachedAlready')}`;
  return glance.callsCapReachedAt ? html`<br>${t('overview.capReached', { date: f.date(glance.callsCapReachedAt) })}` : '';
}

/** The balance is below some products' prices: which are refused, which still paid, and what to do. */
function coverageNotice(state: DashboardState, glance: AllowanceGlance): Html {
  const { t } = state;
  const { payable, refused, shortfall } = glance.coverage;
  const list = (products: CreditPricedProduct[]) =>
    products.map((p, i) => html`${i > 0 ? ', ' : ''}<code>${p.product}</code> (${t(`overview.product.${p.kind}`)}, ${measure(state, p.credits, 'credits')})`);
  return html`<div class="notice notice-warn" role="alert" id="credits-coverage">
    <p><strong>${t('overview.coverage.title', { balance: measure(state, glance.creditsBalance, 'credits') })}</strong></p>
    <p>${t('overview.coverage.refused')} ${list(refused)}.</p>
    <p>${t('overview.coverage.payable')} ${payable.length > 0 ? list(payable) : t('overview.coverage.nonePayable')}.</p>
    <p>${t('overview.coverage.topUp', { credits: measure(state, shortfall, 'credits') })}</p>
  </div>`;
}

/** When the credits run out: already, once nothing more can be spent (not a forecast of today). */
function runOut(state: DashboardState, glance: AllowanceGlance): string {
  const { t, f } = state;
  if (glance.creditsExhausted || glance.creditsBalance <= 0) return t('overview.runOutAlready', { balance: measure(state, glance.creditsBalance, 'credits') });
  return glance.creditsRunOutAt ? t('overview.runOutAt', { date: f.date(glance.creditsRunOutAt) }) : t('overview.runOutNever');
}

// A row applied a minute or more after its time (a late usage event, a rollover the worker made
// once the month had begun) says both: listed in the order applied, it must not pass for a
// call made then. Below a minute the two read the same on the page.
const LATE_MS = 60_000;

/** When a ledger row was applied, and when its call happened (or its change is dated) if that was earlier. */
function appliedWhen(state: DashboardState, row: { appliedAt: string; occurredAt: string; entryType: LedgerEntryType }): Html {
  const { t, f } = state;
  const applied = new Date(row.appliedAt);
  const occurred = new Date(row.occurredAt);
  if (Math.abs(applied.getTime() - occurred.getTime()) < LATE_MS) return html`${f.dateTime(applied)}`;
  const call = row.entryType === 'usage' || row.entryType === 'refused';
  return html`${f.dateTime(applied)}<br><span class="muted small">${t(call ? 'ledger.callAt' : 'ledger.datedAt', { time: f.dateTime(occurred) })}</span>`;
}

/**
 * A row's balance after, and the balance before it when that is not the balance after of the
 * row below: rows the page does not list between them moved it (another type, when the page is
 * filtered; a late event of another month, listed with its own month). The rows are in the
 * order applied, so otherwise each balance follows from the one below. Rows without a balance
 * (a refused call, worth nothing) are passed over; the page's last row has none below to say.
 */
function balanceAfter(state: DashboardState, rows: LedgerPageRow[], i: number): Html {
  const { t, f } = state;
  const row = rows[i]!;
  const after = row.creditsBalanceAfter!;
  let moved = 0;
  for (const below of rows.slice(i + 1)) {
    if (below.creditsBalanceAfter === null) {
      moved += below.creditsDelta;
      continue;
    }
    const before = after - row.creditsDelta;
    if (below.creditsBalanceAfter + moved === before) break;
    return html`${f.number(after)}<br><span class="muted small">${t('ledger.balanceBefore', { balance: f.number(before) })}</span>`;
  }
  return html`${f.number(after)}`;
}

function usageChart(state: DashboardState, report: AllowanceReport, view: View, measure: Measure): Html {
  const { t, f } = state;
  // Every call, credits- and calls-priced alike: not the overview's calls used, which counts
  // only the calls-priced ones.
  const measureLabel = t(measure === 'calls' ? 'usage.allCalls' : 'common.credits');
  const viewLabel = t(view === 'day' ? 'usage.day' : view === 'product' ? 'usage.product' : 'usage.key');
  // "day (UTC)": the first letter lowered, not the zone's.
  const title = t('usage.chartLabel', { measure: measureLabel, view: viewLabel.charAt(0).toLowerCase() + viewLabel.slice(1), period: f.period(report.period) });
  const points = view === 'day'
    ? dailyPoints(report, measure, f)
    : groupedPoints(
        view === 'product'
          ? report.byProduct.map((p) => ({ ...p, label: `${p.product} (${p.source})` }))
          : report.byKey.map((k) => ({ ...k, label: keyLabel(k) ?? `${k.keyId} ${t('usage.unknownKey')}` })),
        measure,
      );
  const chart = view === 'day' ? columnChart({ title, points, format: f.number }) : barList({ title, points, format: f.number });
  const total = points.reduce((n, p) => n + p.value, 0);
  const dataTable = table({
    caption: title,
    headers: [viewLabel, measureLabel],
    rows: [...points.filter((p) => view !== 'day' || p.value > 0).map((p) => [p.label, f.number(p.value)]), [html`<strong>${t('usage.total')}</strong>`, html`<strong>${f.number(total)}</strong>`]],
    numeric: [1],
    empty: t('common.noRows'),
  });
  return html`${chart}<details class="data-table"><summary>${t('common.details')}</summary>${dataTable}</details>`;
}

export function registerFinanceRoutes(router: Router<DashboardState>, deps: FinanceRouteDeps): void {
  const { db } = deps;

  router.get('/orgs/:orgId', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'view_finance');
    const { t, f } = ctx.state;
    const plan = await db('organizations').where({ id: view.org.id }).first<{ plan_id: string | null }>('plan_id');
    const glance = await allowanceGlance(db, view.org.id).catch(() => null);
    const report = glance ? await buildAllowanceReport(db, view.org.id, glance.period) : null;
    // Calls dearer than the balance are refused with the flag down (a cheaper product can
    // still be paid): not "Active", and said below with what is refused and what to do.
    const someRefused = glance !== null && !glance.creditsExhausted && glance.coverage.refused.length > 0;
    const flags = glance
      ? [
          glance.creditsExhausted ? badge(t('overview.flag.credits_exhausted'), 'bad') : '',
          someRefused ? badge(t('overview.flag.someRefused'), 'warn') : '',
          glance.limitReached ? badge(t('overview.flag.limit_reached'), 'bad') : '',
        ]
      : [];
    const body = html`
      ${plan?.plan_id ? '' : html`<div class="notice notice-warn" role="status">${t('overview.noPlan')}</div>`}
      ${someRefused ? coverageNotice(ctx.state, glance) : ''}
      ${glance ? html`
        <p class="muted">${t('overview.thisPeriod', { period: f.period(glance.period) })}</p>
        <div class="stats">
          ${stat(t('overview.balance'), f.number(glance.creditsBalance), unitWord(ctx.state, 'credits', glance.creditsBalance))}
          ${stat(t('overview.callsUsed'), glance.callsCap === null ? f.number(glance.callsUsed) : t('overview.callsOfCap', { used: f.number(glance.callsUsed), cap: f.number(glance.callsCap) }),
            glance.callsCap === null ? t('common.noCap') : html`<meter min="0" max="${glance.callsCap}" value="${Math.min(glance.callsUsed, glance.callsCap)}" low="${Math.floor(glance.callsCap * 0.8)}" high="${Math.floor(glance.callsCap * 0.95)}" optimum="0">${glance.callsUsed}/${glance.callsCap}</meter>${capLine(ctx.state, glance)}`)}
          ${stat(t('overview.flags'), flags.some((x) => x !== '') ? flags : badge(t('overview.flagOk'), 'good'), glance.percentUsed === null ? '' : t('overview.percentUsed', { percent: glance.percentUsed }))}
          ${stat(t('overview.runOut'), runOut(ctx.state, glance), burnRate(ctx.state, glance))}
        </div>
        ${asOfStamp(ctx.state, glance.asOf)}
        ${report ? section(t('overview.usageThisPeriod'), usageChart(ctx.state, report, 'day', 'credits'), { actions: html`<a class="btn btn-secondary" href="/orgs/${view.org.id}/usage">${t('nav.usage')} →</a>` }) : ''}` : ''}`;
    ctx.body = page(ctx.state, { title: t('overview.title'), body, org: view.org, active: 'overview', memberships: view.memberships, banners: view.banners, path: ctx.url });
  });

  router.get('/orgs/:orgId/usage', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'view_finance');
    const { t } = ctx.state;
    const period = chosenPeriod(ctx);
    const chartView: View = ctx.query.view === 'product' || ctx.query.view === 'key' ? ctx.query.view : 'day';
    const measure: Measure = ctx.query.measure === 'calls' ? 'calls' : 'credits';
    const [report, periods] = await Promise.all([buildAllowanceReport(db, view.org.id, period), periodChoices(db, view.org.id, period)]);
    const link = (v: View, m: Measure) => `/orgs/${view.org.id}/usage?period=${period}&view=${v}&measure=${m}`;
    const tab = (v: View, label: string) => html`<a href="${link(v, measure)}" class="tab"${v === chartView ? html` aria-current="page"` : ''}>${label}</a>`;
    const measureTab = (m: Measure, label: string) => html`<a href="${link(chartView, m)}" class="tab"${m === measure ? html` aria-current="page"` : ''}>${label}</a>`;
    const body = html`
      <div class="toolbar-row">
        ${periodSelector(ctx.state, `/orgs/${view.org.id}/usage`, periods, period, { view: chartView, measure })}
        <nav class="tabs" aria-label="${t('usage.title')}">${tab('day', t('usage.byDay'))}${tab('product', t('usage.byProduct'))}${tab('key', t('usage.byKey'))}</nav>
        <nav class="tabs" aria-label="${t('usage.measure')}">${measureTab('credits', t('common.credits'))}${measureTab('calls', t('usage.allCalls'))}</nav>
      </div>
      <p class="muted small">${t('common.periodUtc')}</p>
      ${section(t('usage.title'), usageChart(ctx.state, report, chartView, measure), { id: 'usage-chart' })}
      ${asOfStamp(ctx.state, report.asOf)}`;
    ctx.body = page(ctx.state, { title: t('usage.title'), body, org: view.org, active: 'usage', memberships: view.memberships, banners: view.banners, path: ctx.url });
  });

  router.get('/orgs/:orgId/report', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'view_finance');
    const { t, f } = ctx.state;
    const period = chosenPeriod(ctx);
    const [r, periods] = await Promise.all([buildAllowanceReport(db, view.org.id, period), periodChoices(db, view.org.id, period)]);
    // The unit in the page's language, as the other columns are, and singular after 1.
    const usageRow = (x: { quantity: number; unit: string; calls: number }) => [f.number(x.quantity), unitWord(ctx.state, x.unit, x.quantity), f.number(x.calls)];
    // Each table spans the page: the entries' six columns, the reason last, did not fit half of it.
    const body = html`
      <div class="toolbar-row">
        ${periodSelector(ctx.state, `/orgs/${view.org.id}/report`, periods, period)}
        <a class="btn btn-primary" href="/orgs/${view.org.id}/report.csv?period=${period}" download>${t('report.downloadCsv')}</a>
      </div>
      <p class="muted small">${t('common.periodUtc')}</p>
      <p class="muted small">${csvSeparatorChoice(ctx.state, `/orgs/${view.org.id}/report.csv?period=${period}`)}</p>
      <p class="muted">${t('report.intro')}</p>
      ${asOfStamp(ctx.state, r.asOf)}
      ${section(t('overview.balance'), table({
          caption: t('overview.balance'),
          headers: [t('report.line'), t('report.amount')],
          rowHeaders: true,
          rows: [
            [t('report.opening'), f.number(r.openingBalance)],
            [t('report.granted'), f.number(r.credits.granted)],
            [t('report.toppedUp'), f.number(r.credits.toppedUp)],
            [t('report.adjusted'), f.number(r.credits.adjusted)],
            [t('report.rollover'), f.number(r.credits.rollover)],
            [t('report.used'), f.number(-r.credits.used)],
            [html`<strong>${t('report.closing')}</strong>`, html`<strong>${f.number(r.closingBalance)}</strong>`],
            [t('report.callsUsed'), f.number(r.callsUsed)],
          ],
          numeric: [1],
          empty: '',
        }), { id: 'report-balance' })}
      ${section(t('report.entries'), table({
          caption: t('report.entries'),
          headers: [t('report.at'), t('report.type'), t('common.credits'), t('report.by'), t('report.reference'), t('report.reason')],
          rows: r.entries.map((e) => [f.dateTime(new Date(e.at)), t(`ledger.type.${e.type as LedgerEntryType}`), f.number(e.credits), e.actor === null ? '—' : ledgerActor(ctx.state, e.actor), e.reference ?? '—', ledgerReason(ctx.state, e.reason ?? '')]),
          numeric: [2],
          empty: t('common.noRows'),
        }), { id: 'report-entries' })}
      ${section(t('report.byProduct'), table({ caption: t('report.byProduct'), headers: [t('report.source'), t('usage.product'), t('report.quantity'), t('report.unit'), t('usage.allCalls')], rows: r.byProduct.map((p) => [p.source, p.product, ...usageRow(p)]), numeric: [2, 4], empty: t('common.noRows') }), { id: 'report-products' })}
      ${section(t('report.byKey'), table({ caption: t('report.byKey'), headers: [t('usage.key'), t('report.quantity'), t('report.unit'), t('usage.allCalls')], rows: r.byKey.map((k) => [html`${keyLabel(k) ?? t('usage.unknownKey')} <code>${k.keyId}</code>`, ...usageRow(k)]), numeric: [1, 3], empty: t('common.noRows') }), { id: 'report-keys' })}
      ${section(t('report.byDay'), table({ caption: t('report.byDay'), headers: [t('usage.day'), t('report.quantity'), t('report.unit'), t('usage.allCalls')], rows: r.byDay.map((d) => [f.day(d.day), ...usageRow(d)]), numeric: [1, 3], empty: t('common.noRows') }), { id: 'report-days' })}
      ${section(t('report.flags'), table({ caption: t('report.flags'), headers: [t('report.at'), t('report.flag'), t('report.change'), t('report.reason')], rows: r.flagHistory.map((x) => [f.dateTime(new Date(x.at)), flagName(ctx.state, x.flag), t(x.value ? 'report.set' : 'report.cleared'), flagReason(ctx.state, x)]), empty: t('common.noRows') }), { id: 'report-flags' })}
      <p class="muted small">${t('report.generated', { time: f.dateTime(new Date(r.generatedAt)) })}</p>`;
    ctx.body = page(ctx.state, { title: `${t('report.title')} · ${f.period(period)}`, body, org: view.org, active: 'report', memberships: view.memberships, banners: view.banners, path: ctx.url });
  });

  // The rows of `cli report --format csv` from the same core formatter, for Excel: the BOM, then
  // `cli report --format csv --delimiter <the separator>`'s bytes (csv-download.ts).
  router.get('/orgs/:orgId/report.csv', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'view_finance');
    const period = chosenPeriod(ctx);
    const report = await buildAllowanceReport(db, view.org.id, period);
    sendAsCsv(ctx, `report-${view.org.id}-${period}.csv`);
    ctx.body = csvFile(allowanceReportCsv(report, csvSeparator(ctx)));
  });

  router.get('/orgs/:orgId/ledger', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'view_finance');
    const { t, f } = ctx.state;
    const filters = ledgerFilters(ctx);
    const { period, type } = filters;
    const [result, periods] = await Promise.all([ledgerPage(db, view.org.id, { period, type, ...rowPagerPosition(ctx.query) }), periodChoices(db, view.org.id, period)]);
    const link = (to: RowPagerTarget) => `/orgs/${view.org.id}/ledger?${ledgerQuery(filters, rowPagerQuery(to))}`;
    const download = `/orgs/${view.org.id}/ledger.csv${period || type ? `?${ledgerQuery(filters)}` : ''}`;
    const signed = (n: number) => (n > 0 ? `+${f.number(n)}` : f.number(n));
    const rows = result.rows.map((r, i) => [
      appliedWhen(ctx.state, r),
      badge(t(`ledger.type.${r.entryType}`), r.entryType === 'usage' ? 'neutral' : r.entryType === 'adjustment' ? 'warn' : 'info'),
      r.entryType === 'usage'
        ? html`<code>${r.product ?? ''}</code> <span class="muted small">${r.source}${r.keyId ? html` · ${r.keyLabel ?? r.keyId}` : ''}</span>`
        : html`${ledgerReason(ctx.state, r.reason ?? '')}${r.actorLabel ? html` <span class="muted small">· ${ledgerActor(ctx.state, r.actorLabel)}</span>` : ''}${r.reference === null ? '' : html` <span class="small">· ${t('ledger.reference', { reference: r.reference })}</span>`}`,
      r.creditsDelta === 0 ? html`<span class="muted">0</span>` : signed(r.creditsDelta),
      r.callsDelta === 0 ? html`<span class="muted">0</span>` : signed(r.callsDelta),
      r.creditsBalanceAfter === null ? '—' : balanceAfter(ctx.state, result.rows, i),
    ]);
    const body = html`
      <p class="lead">${t('ledger.intro')}</p>
      <div class="toolbar-row">
        <form method="get" action="/orgs/${view.org.id}/ledger" class="toolbar">
          <label for="ledger-period">${t('common.period')}</label>
          <select id="ledger-period" name="period"><option value="">${t('ledger.allPeriods')}</option>${periods.map((p) => html`<option value="${p}"${p === period ? html` selected` : ''}>${f.period(p)}</option>`)}</select>
          <label for="ledger-type">${t('ledger.type')}</label>
          <select id="ledger-type" name="type"><option value="">${t('ledger.allTypes')}</option>${ledgerEntryTypes.map((x) => html`<option value="${x}"${x === type ? html` selected` : ''}>${t(`ledger.type.${x}`)}</option>`)}</select>
          <button type="submit" class="btn btn-secondary">${t('common.show')}</button>
        </form>
        <a class="btn btn-primary" href="${download}" download>${t('ledger.downloadCsv')}</a>
      </div>
      <p class="muted small">${t('ledger.downloadHint')} ${csvSeparatorChoice(ctx.state, download)}</p>
      <p class="muted small">${t('common.periodUtc')}</p>
      ${section(t('ledger.title'), html`${table({
        caption: t('ledger.title'),
        headers: [t('ledger.applied'), t('ledger.type'), t('ledger.what'), t('ledger.credits'), t('ledger.calls'), t('ledger.balance')],
        rows,
        numeric: [3, 4, 5],
        empty: t('common.noRows'),
      })}
      ${rowPager(ctx.state, result, link)}`, { id: 'ledger-table' })}`;
    ctx.body = page(ctx.state, { title: t('ledger.title'), body, org: view.org, active: 'ledger', memberships: view.memberships, banners: view.banners, path: ctx.url });
  });

  // The lines of `ledger export --format csv` as a download (dashboard/csv-download.ts), for the
  // page's month and type, every row rather than a page's 50, oldest first. Streamed from the
  // export's cursor: a busy month is millions of rows. All months: each month's export in turn,
  // one header.
  router.get('/orgs/:orgId/ledger.csv', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'view_finance');
    const { period, type } = ledgerFilters(ctx);
    const body = await csvStream(ledgerCsvLines(exportLedger(db, view.org.id, period, { entryType: type }), csvSeparator(ctx)));
    sendAsCsv(ctx, `ledger-${view.org.id}-${period ?? 'all'}${type ? `-${type}` : ''}.csv`);
    ctx.body = body;
  });
}
