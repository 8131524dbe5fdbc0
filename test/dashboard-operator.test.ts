import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { periodOf } from '../core/billing/billing-period.js';
import { changeCredits, createOrganization, reconcileLedger, rollOverDueAllowances, setProductOverride } from '../core/billing/index.js';
import { organizationsOverview, type OrganizationOverviewRow } from '../core/finance/index.js';
import { formats } from '../dashboard/i18n/translate.js';
import { createOperator, dashboardForFile, hiddenFieldsOf, httpSession, signedInOperator } from './dashboard-fixtures.js';
import { runCli } from './support/run-cli.js';

// The operator's organization forms over plain HTTP: a refused form changes nothing and says
// which field is wrong.

const env = dashboardForFile();


const organizationRow = (id: string) => env.db('organizations').where({ id }).first<{ credits_per_period: number | null; rate_per_second: number | null }>('credits_per_period', 'rate_per_second');
const auditRows = async (id: string) => Number((await env.db('audit_log').where({ organization_id: id }).count<{ n: string }[]>({ n: '*' }))[0]!.n);

describe('operator overview', () => {
  it('when usage messages were set aside as unbillable, then the overview counts the open ones and says what to do', async () => {
    const open = () => env.db('usage_dead_letters').whereNull('resolved_at').count<{ n: string }[]>({ n: '*' }).first().then((r) => Number(r!.n));
    await env.db('usage_dead_letters').insert({ bus: 'postgres', payload: 'not an event', reason: 'not JSON (operator overview test)' });
    const client = await signedInOperator(env);
    const before = await open();
    const body = await (await client.get('/operator')).text();
    const after = await open();
    const shown = Number(/Unbilled usage messages<\/div><div class="stat-value">([\d,]+)</.exec(body)?.[1]?.replaceAll(',', ''));
    // Other test files add dead letters alongside: the page's count is one read between these two.
    expect(shown).toBeGreaterThanOrEqual(Math.max(1, Math.min(before, after)));
    expect(shown).toBeLessThanOrEqual(Math.max(before, after));
    expect(body).toContain('see cli billing dead-letters, then replay-dead-letters once the cause is fixed');
  });

  it('when an organization has no plan, then the list and its page say its calls are refused, not "Active", and the activity says the plan was removed', async () => {
    const name = `No plan status ${randomUUID().slice(0, 8)}`;
    const org = await createOrganization(env.db, { name, planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const removed = await (await client.post(`${page}/plan`, { ...(await client.hiddenFields(page, `${page}/plan`)), planId: '' })).text();
    const status = (body: string) => /<div class="stat-label">Status<\/div><div class="stat-value">([\s\S]*?)<\/div>/.exec(body)?.[1] ?? '';
    expect(status(removed)).toContain('No plan: calls refused');
    expect(status(removed)).not.toContain('Active');
    expect(removed).toContain('Removed the plan: its API calls are refused until it has one');
    const list = await (await client.get(`/operator?q=${encodeURIComponent(name)}`)).text();
    const row = /<tbody>([\s\S]*?)<\/tbody>/.exec(list.split('id="all-orgs"')[1] ?? '')?.[1] ?? '';
    expect(row).toContain('No plan: calls refused');
    expect(row).not.toContain('>Active<');
  });
});

describe('operator overview: finding organizations', () => {
  it('when many organizations match then they come 50 a page by name, the search finds by name or id as typed, and the totals count every organization', async () => {
    const token = `Paged${randomUUID().slice(0, 8)}`;
    const orgs = [];
    for (let i = 0; i < 55; i++) orgs.push(await createOrganization(env.db, { name: `${token} ${String(i).padStart(2, '0')} SRL`, planId: 'standard' }));
    const client = await signedInOperator(env);
    const names = (body: string) => [...body.matchAll(new RegExp(`<strong>(${token} \\d\\d SRL)</strong>`, 'g'))].map((m) => m[1]);
    const first = await (await client.get(`/operator?q=${token.toLowerCase()}`)).text();
    expect(names(first)).toEqual(orgs.slice(0, 50).map((o) => o.name));
    expect(first).toContain(`href="/operator?q=${token.toLowerCase()}&amp;page=2"`);
    const second = await (await client.get(`/operator?q=${token.toLowerCase()}&page=2`)).text();
    expect(names(second)).toEqual(orgs.slice(50).map((o) => o.name));
    expect(second).toContain('Page 2 of 2 · 55 organizations');
    const all = Number((await env.db('organizations').count<{ n: string }[]>({ n: '*' }))[0]!.n);
    const shown = Number(/Organizations<\/div><div class="stat-value">([\d,]+)</.exec(second)?.[1]?.replaceAll(',', ''));
    expect(shown).toBeGreaterThanOrEqual(Math.min(all, 55));

    const byId = await (await client.get(`/operator?q=${orgs[7]!.id}`)).text();
    expect(names(byId)).toEqual([orgs[7]!.name]);
    const wildcard = await (await client.get(`/operator?q=${encodeURIComponent(`${token}%`)}`)).text();
    expect(names(wildcard)).toEqual([]);
    expect(wildcard).toContain(`No organization has “${token}%” in its name or id.`);
  });
});

describe('operator overview: what each balance pays for', () => {
  it('when a listed organization\'s balance pays for some of its products only, then its row says "Balance too low for some products", as its Overview does, not OK; the page reads it without a query per row', async () => {
    const token = `Coverage${randomUUID().slice(0, 8)}`;
    // The standard plan grants 100,000 credits; its credits prices run from 1 to 10.
    const withBalance = async (name: string, balance: number) => {
      const org = await createOrganization(env.db, { name: `${token} ${name}`, planId: 'standard' });
      await changeCredits(env.db, { organizationId: org.id, kind: 'adjustment', credits: balance - 100_000, actor: 'test', reason: 'test set-up' });
      return org;
    };
    await withBalance('a short', 4);
    await withBalance('b enough', 10);
    await withBalance('c exhausted', 0);
    // 9 credits pay for every product once the 10-credit ones are removed: overrides are followed.
    const overridden = await withBalance('d overridden', 9);
    for (const product of ['company-credit-report', 'service_analyze_company']) await setProductOverride(env.db, overridden.id, product, { enabled: false });
    const client = await signedInOperator(env);
    const flagsOf = (body: string) => Object.fromEntries([...body.matchAll(new RegExp(`<tr>.*?<strong>${token} (\\w+) \\w+</strong>.*?</tr>`, 'gs'))]
      .map((m) => [m[1]!, [...m[0].matchAll(/<span class="badge badge-(\w+)">([^<]*)</g)].map((b) => `${b[1]}: ${b[2]}`).join(', ')]));

    expect(flagsOf(await (await client.get(`/operator?q=${token}`)).text())).toEqual({
      a: 'warn: Balance too low for some products',
      b: 'good: Active',
      c: 'bad: Credits exhausted',
      d: 'good: Active',
    });
    await client.get('/language?lang=it&next=/');
    expect(flagsOf(await (await client.get(`/operator?q=${token}`)).text()).a).toBe('warn: Saldo insufficiente per alcuni prodotti');

    // The list's statements are as many for four organizations as for none.
    const statements = async (path: string) => {
      let n = 0;
      const count = () => void n++;
      env.db.on('query', count);
      try {
        expect((await client.get(path)).status).toBe(200);
      } finally {
        env.db.removeListener('query', count);
      }
      return n;
    };
    expect(await statements(`/operator?q=${token}`)).toBe(await statements(`/operator?q=${token}-none`));
  });
});

describe('operator overview: the Flags count', () => {
  // What the list's rows say of each organization, and the totals over every one, read in one
  // snapshot: other test files change organizations alongside.
  const snapshot = () => env.db.transaction(async (trx) => {
    await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    return organizationsOverview(trx, { pageSize: 1_000_000_000 });
  }, { readOnly: true });
  const rowCounts = (rows: OrganizationOverviewRow[]) => ({
    flagged: rows.filter((r) => r.creditsExhausted || r.limitReached).length,
    someProductsRefused: rows.filter((r) => r.someProductsRefused).length,
    unprovisioned: rows.filter((r) => r.planId === null).length,
    notActive: rows.filter((r) => r.creditsExhausted || r.limitReached || r.someProductsRefused || r.planId === null).length,
  });

  it('when balances pay for some products only, then the count at the top counts them with the flagged organizations, as their rows say, and names each kind beside it, in English and Italian; over every organization it agrees with the rows, overrides followed', async () => {
    const token = `Count${randomUUID().slice(0, 8)}`;
    // The standard plan grants 100,000 credits; its credits prices run from 1 to 10.
    const withBalance = async (name: string, balance: number, planId: string | null = 'standard') => {
      const org = await createOrganization(env.db, { name: `${token} ${name}`, planId });
      const opening = (await env.db('allowances').where({ organization_id: org.id }).first<{ credits_balance: number }>('credits_balance'))!.credits_balance;
      await changeCredits(env.db, { organizationId: org.id, kind: 'adjustment', credits: balance - opening, actor: 'test', reason: 'test set-up' });
      return org.id;
    };
    await withBalance('a short', 4);
    await withBalance('b enough', 10);
    await withBalance('c exhausted', 0);
    // 9 credits pay for every product once the 10-credit ones are turned off.
    const off = await withBalance('d off', 9);
    for (const product of ['company-credit-report', 'service_analyze_company']) await setProductOverride(env.db, off, product, { enabled: false });
    // No plan: its one product, enabled with no measure of its own, costs the catalogue's 8 credits,
    // more than the 3 it has: not even its cheapest call is paid, so its flag is up (flagged).
    const noPlan = await withBalance('e noplan', 3, null);
    await setProductOverride(env.db, noPlan, 'company-profile', { enabled: true });
    // 10 credits, and a plan's 5-credit product at 12 (the plan's unit kept): refused.
    const dearer = await withBalance('f dearer', 10);
    await setProductOverride(env.db, dearer, 'company-financials', { enabled: true, quantity: 12 });
    // The calls cap reached as well as a short balance: counted once.
    const both = await withBalance('g both', 4);
    await env.db('allowances').where({ organization_id: both }).update({ limit_reached: true });

    const { rows, totals } = await snapshot();
    const mine = Object.fromEntries(rows.filter((r) => r.name.startsWith(token)).map((r) => [r.name.split(' ')[1], [r.creditsExhausted || r.limitReached, r.someProductsRefused]]));
    expect(mine).toEqual({ a: [false, true], b: [false, false], c: [true, false], d: [false, false], e: [true, false], f: [false, true], g: [true, true] });
    expect(rows).toHaveLength(totals.organizations);
    expect({ flagged: totals.flagged, someProductsRefused: totals.someProductsRefused, unprovisioned: totals.unprovisioned, notActive: totals.notActive }).toEqual(rowCounts(rows));

    // The page's count is one read of the totals between these two.
    const client = await signedInOperator(env);
    const flagsStat = (body: string) => /<div class="stat-label">(?:Flags|Segnalazioni)<\/div><div class="stat-value">([\d,.]+)<\/div><div class="stat-sub">([^<]*)<\/div>/.exec(body)!.slice(1);
    const between = async (path: string) => {
      const before = (await snapshot()).totals;
      const body = await (await client.get(path)).text();
      const after = (await snapshot()).totals;
      return { before, after, shown: flagsStat(body) };
    };
    const within = (value: string, a: number, b: number) => {
      const n = Number(value.replaceAll(/[,.]/g, ''));
      expect(n).toBeGreaterThanOrEqual(Math.min(a, b));
      expect(n).toBeLessThanOrEqual(Math.max(a, b));
    };
    const english = await between('/operator');
    within(english.shown[0]!, english.before.notActive, english.after.notActive);
    const [, orgs, flagged, low, unprovisioned] = /^([\d,]+) organizations · ([\d,]+) flagged · ([\d,]+) with a balance too low for some products · ([\d,]+) without a plan$/.exec(english.shown[1]!)!;
    within(orgs!, english.before.organizations, english.after.organizations);
    within(flagged!, english.before.flagged, english.after.flagged);
    within(low!, english.before.someProductsRefused, english.after.someProductsRefused);
    within(unprovisioned!, english.before.unprovisioned, english.after.unprovisioned);
    await client.get('/language?lang=it&next=/');
    const italian = await between('/operator');
    within(italian.shown[0]!, italian.before.notActive, italian.after.notActive);
    expect(italian.shown[1]).toMatch(/^[\d.]+ organizzazioni · [\d.]+ con segnalazioni · [\d.]+ con saldo insufficiente per alcuni prodotti · [\d.]+ senza piano$/);
  });
});

const cli = (...args: string[]) => runCli(inject('databaseUrl'), ...args);
const lastMonth = () => {
  const now = new Date();
  return periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));
};
const capsOf = async (id: string) => ({
  ...(await env.db('organizations').where({ id }).first<{ calls_cap_per_period: number | null; calls_cap_own: boolean }>('calls_cap_per_period', 'calls_cap_own')),
  ...(await env.db('allowances').where({ organization_id: id }).first<{ calls_cap: number | null }>('calls_cap')),
});
const capRows = (id: string) => env.db('usage_ledger').where({ organization_id: id, entry_type: 'cap_change' }).orderBy('id').select<{ source: string; actor: string; reason: string; period: string }[]>('source', 'actor', 'reason', 'period');
/** The calls cap field as the page renders it, and the help under it. */
const capField = (body: string) => ({
  value: /<input id="calls-cap" name="callsCap" type="\w+"(?: value="([^"]*)")?/.exec(body)?.[1] ?? '',
  help: /<p class="help" id="calls-cap-help">([^<]*)<\/p>/.exec(body)?.[1] ?? '',
});

describe('operator period form: the organization\'s own calls cap and this period\'s', () => {
  it('when this period has a cap set for this period only, then the form shows the organization\'s own cap with this period\'s beside it, saving only the credits changes and records only the credits, and the rollover brings the own cap back with a ledger row', async () => {
    const org = await createOrganization(env.db, { name: 'Operator own cap test', planId: 'standard' });
    // The finance reviewer's steps, with the real CLI.
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '8', '--reason', 'deal: eight calls')).code).toBe(0);
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '12', '--this-period-only', '--reason', 'this month: twelve')).code).toBe(0);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: 8, calls_cap_own: true, calls_cap: 12 });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const shown = await (await client.get(page)).text();
    expect(capField(shown)).toEqual({ value: '8', help: 'This period: 12, set for this period only. The organization&#39;s own cap. Empty: no cap. Applies now and to the periods to come.' });
    const ledgerBefore = await capRows(org.id);
    const auditBefore = await auditRows(org.id);

    // Only the credits per period changed; the cap is sent as the form showed it.
    const saved = await client.post(`${page}/period`, { ...(await client.hiddenFields(page, `${page}/period`)), creditsPerPeriod: '500', callsCap: capField(shown).value });
    expect(saved.status).toBe(200);
    const body = await saved.text();
    expect(body).toContain('Saved.');
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: 8, calls_cap_own: true, calls_cap: 12 });
    expect((await organizationRow(org.id))!.credits_per_period).toBe(500);
    expect(await capRows(org.id)).toEqual(ledgerBefore);
    expect(await auditRows(org.id)).toBe(auditBefore + 1);
    const audit = await env.db('audit_log').where({ organization_id: org.id, action: 'organization.period_set' }).pluck('details');
    expect(audit).toEqual([{ creditsPerPeriod: 500 }]);
    // The activity row names what changed, and only that.
    const activity = /<section class="card" id="org-audit"[\s\S]*?<\/section>/.exec(body)![0];
    expect(activity).toContain('Set credits per month to 500<');
    expect(activity).not.toContain('Set credits per month to 500 and');
    expect(capField(body).value).toBe('8');

    // The next month: the cap set for this month only ends, and the ledger says why.
    await env.db('allowances').where({ organization_id: org.id }).update({ period: lastMonth() });
    await rollOverDueAllowances(env.db);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: 8, calls_cap_own: true, calls_cap: 8 });
    const current = periodOf(new Date());
    expect((await capRows(org.id)).slice(ledgerBefore.length)).toEqual([
      { source: 'system', actor: 'system', reason: `calls cap 12 -> 8: period rollover to ${current}: the organization's own cap`, period: current },
    ]);
    expect((await reconcileLedger(env.db, { organizationIds: [org.id] })).differences).toEqual([]);
    const ledger = await (await client.get(`/orgs/${org.id}/ledger?type=cap_change&period=${current}`)).text();
    expect(ledger).toContain(`calls cap 12 → 8: period rollover to ${formats('en').period(current)}: the organization&#39;s own cap`);
    const after = await (await client.get(page)).text();
    expect(capField(after)).toEqual({ value: '8', help: 'The organization&#39;s own cap. Empty: no cap. Applies now and to the periods to come.' });
    await client.get('/language?lang=it&next=/');
    const italian = await (await client.get(`/orgs/${org.id}/ledger?type=cap_change&period=${current}`)).text();
    expect(italian).toContain(`tetto chiamate da 12 a 8: cambio di periodo a ${formats('it').period(current)}: il tetto proprio dell&#39;organizzazione`);
  });

  it('when only the cap is changed, then the activity row names only the cap; saved unchanged, an organization on its plan\'s cap stays on it', async () => {
    const org = await createOrganization(env.db, { name: 'Operator plan cap test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '5', '--this-period-only', '--reason', 'trial month')).code).toBe(0);
    const shown = await (await client.get(page)).text();
    expect(capField(shown)).toEqual({ value: '100000', help: 'This period: 5, set for this period only. The cap of plan standard; a cap saved here becomes the organization&#39;s own. Empty: no cap. Applies now and to the periods to come.' });
    const audits = await auditRows(org.id);
    const ledger = await capRows(org.id);
    // Saved as shown: the organization keeps following its plan's cap, and nothing is recorded.
    expect((await client.post(`${page}/period`, { ...(await client.hiddenFields(page, `${page}/period`)), creditsPerPeriod: '', callsCap: '100000' })).status).toBe(200);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: null, calls_cap_own: false, calls_cap: 5 });
    expect(await auditRows(org.id)).toBe(audits);
    expect(await capRows(org.id)).toEqual(ledger);

    const saved = await (await client.post(`${page}/period`, { ...(await client.hiddenFields(page, `${page}/period`)), creditsPerPeriod: '', callsCap: '20' })).text();
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: 20, calls_cap_own: true, calls_cap: 20 });
    expect(await env.db('audit_log').where({ organization_id: org.id, action: 'organization.period_set' }).pluck('details')).toEqual([{ callsCap: 20 }]);
    const activity = /<section class="card" id="org-audit"[\s\S]*?<\/section>/.exec(saved)![0];
    expect(activity).toContain('Set the calls cap to 20<');
    expect(activity).not.toContain('credits per month');
    expect((await capRows(org.id)).slice(ledger.length).map((r) => r.reason)).toEqual(['calls cap 5 -> 20: set in the operator dashboard']);
  });
});

describe('operator period form: back to the plan\'s cap', () => {
  const usePlanCapButton = (body: string) => /<form method="post" action="([^"]+)" class="stack" id="use-plan-cap">[\s\S]*?<button[^>]*>([^<]*)<\/button>/.exec(body)?.slice(1) ?? null;
  const activityOf = (body: string) => /<section class="card" id="org-audit"[\s\S]*?<\/section>/.exec(body)![0];

  it('when an organization on its plan\'s cap has a cap set for this period only, then "Use the plan\'s cap" is offered and brings this period back to the plan\'s', async () => {
    const org = await createOrganization(env.db, { name: 'Operator this period cap test', planId: 'standard' });
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '12', '--this-period-only', '--reason', 'deal')).code).toBe(0);
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const shown = await (await client.get(page)).text();
    expect(usePlanCapButton(shown)).toEqual([`${page}/calls-cap/plan`, 'Use the plan&#39;s cap (100,000)']);
    expect(shown).toContain('This period has a cap set for it only: it gets the cap of plan standard again, as the periods to come have.');
    const back = await (await client.post(`${page}/calls-cap/plan`, await client.hiddenFields(page, `${page}/calls-cap/plan`))).text();
    expect(back).toContain('Saved: the calls cap is plan standard&#39;s again (100,000)');
    expect(await env.db('allowances').where({ organization_id: org.id }).first('calls_cap')).toEqual({ calls_cap: 100_000 });
    expect(await env.db('organizations').where({ id: org.id }).first('calls_cap_own')).toEqual({ calls_cap_own: false });
    // Nothing left to undo: no button.
    expect(usePlanCapButton(back)).toBeNull();
  });

  it('when the organization has a cap of its own, then "Use the plan\'s cap" puts it back on its plan\'s, this period and later ones, with a ledger row and an activity row, in English and Italian; sent again, it changes nothing', async () => {
    const org = await createOrganization(env.db, { name: 'Operator back to plan cap test', planId: 'standard' });
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '8', '--reason', 'deal: eight calls')).code).toBe(0);
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const shown = await (await client.get(page)).text();
    expect(usePlanCapButton(shown)).toEqual([`${page}/calls-cap/plan`, 'Use the plan&#39;s cap (100,000)']);
    const ledger = await capRows(org.id);
    const audits = await auditRows(org.id);

    const button = await client.hiddenFields(page, `${page}/calls-cap/plan`);
    const answer = await client.post(`${page}/calls-cap/plan`, button);
    expect(answer.status).toBe(200);
    const body = await answer.text();
    expect(body).toContain('Saved: the calls cap is plan standard&#39;s again (100,000), this period and the periods to come.');
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: null, calls_cap_own: false, calls_cap: 100000 });
    const current = periodOf(new Date());
    expect((await capRows(org.id)).slice(ledger.length)).toEqual([
      { source: 'admin', actor: expect.stringMatching(/^usr_/), reason: 'calls cap 8 -> 100000: back to the cap of plan standard: set in the operator dashboard', period: current },
    ]);
    expect(await auditRows(org.id)).toBe(audits + 1);
    expect(await env.db('audit_log').where({ organization_id: org.id, action: 'allowance.cap_plan' }).pluck('details')).toEqual([{ planId: 'standard', callsCap: 100000 }]);
    expect(activityOf(body)).toContain('Put the calls cap back on plan standard&#39;s (100,000)<');
    // The form now says the plan's cap applies, and offers no way back to it.
    expect(capField(body)).toEqual({ value: '100000', help: 'The cap of plan standard; a cap saved here becomes the organization&#39;s own. Empty: no cap. Applies now and to the periods to come.' });
    expect(usePlanCapButton(body)).toBeNull();
    const ledgerPage = await (await client.get(`/orgs/${org.id}/ledger?type=cap_change&period=${current}`)).text();
    expect(ledgerPage).toContain('calls cap 8 → 100,000: back to the cap of plan standard: set in the operator dashboard');

    // Sent again (a double-click, a reload): nothing to undo, nothing written.
    const again = await client.post(`${page}/calls-cap/plan`, button);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('Saved.');
    expect(await capRows(org.id)).toHaveLength(ledger.length + 1);
    expect(await auditRows(org.id)).toBe(audits + 1);

    // Later months get the plan's cap: the rollover moves nothing, so writes no cap row.
    await env.db('allowances').where({ organization_id: org.id }).update({ period: lastMonth() });
    await rollOverDueAllowances(env.db);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: null, calls_cap_own: false, calls_cap: 100000 });
    expect(await capRows(org.id)).toHaveLength(ledger.length + 1);

    // In Italian: the button, the ledger's reason and the activity row.
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '9', '--reason', 'deal: nine calls')).code).toBe(0);
    await client.get('/language?lang=it&next=/');
    expect(usePlanCapButton(await (await client.get(page)).text())).toEqual([`${page}/calls-cap/plan`, 'Usa il tetto del piano (100.000)']);
    const italian = await (await client.post(`${page}/calls-cap/plan`, await client.hiddenFields(page, `${page}/calls-cap/plan`))).text();
    expect(italian).toContain('Salvato: il tetto di chiamate è di nuovo quello del piano standard (100.000), per questo periodo e i successivi.');
    expect(activityOf(italian)).toContain('Riportato il tetto di chiamate a quello del piano standard (100.000)<');
    expect(await (await client.get(`/orgs/${org.id}/ledger?type=cap_change&period=${current}`)).text())
      .toContain('tetto chiamate da 9 a 100.000: di nuovo il tetto del piano standard: impostato dalla dashboard dell&#39;operatore');
  });

  it('when the organization has no plan, then there is no plan\'s cap to go back to: no button, and the form sent anyway is refused and changes nothing', async () => {
    const org = await createOrganization(env.db, { name: 'Operator no plan cap test', planId: null });
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '8', '--reason', 'deal: eight calls')).code).toBe(0);
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    expect(usePlanCapButton(await (await client.get(page)).text())).toBeNull();
    const ledger = await capRows(org.id);
    // Sent anyway, with what the page showed (the period form's fields: there is no button).
    const refused = await client.post(`${page}/calls-cap/plan`, await client.hiddenFields(page, `${page}/period`));
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('Please check the form: Calls cap per period: the organization has no plan, so no plan&#39;s cap to go back to');
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: 8, calls_cap_own: true, calls_cap: 8 });
    expect(await capRows(org.id)).toEqual(ledger);
  });
});

describe('operator period form: saved only over what the page showed', () => {
  const notices = (body: string) => [...body.matchAll(/<div class="notice notice-(\w+)" role="\w+">([^<]*)<\/div>/g)].map((m) => `${m[1]}: ${m[2]}`);
  const lastAudit = (id: string) => env.db('audit_log').where({ organization_id: id }).orderBy('id', 'desc').first<{ actor: string; at: Date }>('actor', 'at');

  it('when the cap is changed from the CLI while the page is open, then saving the form changes nothing, not even its other field, and says what the cap is now and who changed it when; saved again, the operator\'s values apply', async () => {
    const org = await createOrganization(env.db, { name: 'Operator stale cap test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const action = `${page}/period`;
    const shown = await client.hiddenFields(page, action);
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '8', '--reason', 'deal: eight calls')).code).toBe(0);
    const cliChange = (await lastAudit(org.id))!;
    const ledger = await capRows(org.id);
    const audits = await auditRows(org.id);

    const stale = await client.post(action, { ...shown, creditsPerPeriod: '500', callsCap: '20' });
    expect(stale.status).toBe(409);
    const body = await stale.text();
    expect(notices(body)).toEqual([
      `warn: Nothing was saved: these values changed after this page was shown. The calls cap is now 8 (the organization&#39;s own). Last changed by ${cliChange.actor}, ${formats('en').dateTime(cliChange.at)}: Set the calls cap to 8: deal: eight calls. The form below keeps what you typed: save it again to put it over the values now.`,
    ]);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: 8, calls_cap_own: true, calls_cap: 8 });
    expect((await organizationRow(org.id))!.credits_per_period).toBeNull();
    expect(await capRows(org.id)).toEqual(ledger);
    expect(await auditRows(org.id)).toBe(audits);
    // What was typed, in the form drawn over the values now: saved again, it applies.
    expect(capField(body).value).toBe('20');
    expect(body).toContain('<input id="credits-per-period" name="creditsPerPeriod" type="text" value="500"');
    const saved = await client.post(action, { ...hiddenFieldsOf(body, action), creditsPerPeriod: '500', callsCap: '20' });
    expect(saved.status).toBe(200);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: 20, calls_cap_own: true, calls_cap: 20 });
    expect((await organizationRow(org.id))!.credits_per_period).toBe(500);
    expect((await capRows(org.id)).slice(ledger.length).map((r) => r.reason)).toEqual(['calls cap 8 -> 20: set in the operator dashboard']);
  });

  it('when another operator changed the credits per period, then a save of the cap alone is refused too, in Italian; a form without what it showed is refused as changed', async () => {
    const org = await createOrganization(env.db, { name: 'Operator stale credits test', planId: 'standard' });
    const client = await signedInOperator(env);
    const other = await createOperator(env.db);
    const otherClient = httpSession(env.dashboard.url);
    await otherClient.signIn(other.email, other.password);
    await client.get('/language?lang=it&next=/');
    const page = `/operator/organizations/${org.id}`;
    const action = `${page}/period`;
    const shown = await client.hiddenFields(page, action);
    expect((await otherClient.post(action, { ...(await otherClient.hiddenFields(page, action)), creditsPerPeriod: '700', callsCap: '100000' })).status).toBe(200);
    const change = (await lastAudit(org.id))!;

    const stale = await client.post(action, { ...shown, creditsPerPeriod: '', callsCap: '30' });
    expect(stale.status).toBe(409);
    expect(notices(await stale.text())).toEqual([
      `warn: Non è stato salvato nulla: questi valori sono cambiati dopo che la pagina è stata mostrata. I crediti per periodo ora sono 700. Ultima modifica di ${other.email}, ${formats('it').dateTime(change.at)}: Crediti mensili: 700. Il modulo qui sotto conserva quanto hai scritto: salvalo di nuovo per applicarlo sui valori attuali.`,
    ]);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: null, calls_cap_own: false, calls_cap: 100000 });
    expect((await organizationRow(org.id))!.credits_per_period).toBe(700);

    const unvouched = await client.post(action, { _csrf: await client.csrf(page), creditsPerPeriod: '700', callsCap: '30' });
    expect(unvouched.status).toBe(409);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: null, calls_cap_own: false, calls_cap: 100000 });
  });

  it('when the same form is sent twice (a double-click), then the second finds its own values and says Saved., with one activity row', async () => {
    const org = await createOrganization(env.db, { name: 'Operator double save test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const shown = await client.hiddenFields(page, `${page}/period`);
    const audits = await auditRows(org.id);
    const [first, second] = await Promise.all([1, 2].map(() => client.post(`${page}/period`, { ...shown, creditsPerPeriod: '300', callsCap: '25' })));
    expect([first!.status, second!.status]).toEqual([200, 200]);
    expect(await auditRows(org.id)).toBe(audits + 1);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: 25, calls_cap_own: true, calls_cap: 25 });

    const button = await client.hiddenFields(page, `${page}/calls-cap/plan`);
    const twice = await Promise.all([1, 2].map(() => client.post(`${page}/calls-cap/plan`, button)));
    expect(twice.map((r) => r.status)).toEqual([200, 200]);
    expect(await auditRows(org.id)).toBe(audits + 2);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: null, calls_cap_own: false, calls_cap: 100000 });
  });

  it('when the cap is changed while the page offers "Use the plan\'s cap", then pressing it changes nothing and says so', async () => {
    const org = await createOrganization(env.db, { name: 'Operator stale plan cap test', planId: 'standard' });
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '8', '--reason', 'deal: eight calls')).code).toBe(0);
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const button = await client.hiddenFields(page, `${page}/calls-cap/plan`);
    expect((await cli('billing', 'set-cap', '--org', org.id, '--calls', '12', '--this-period-only', '--reason', 'this month: twelve')).code).toBe(0);
    const change = (await lastAudit(org.id))!;
    const ledger = await capRows(org.id);

    const stale = await client.post(`${page}/calls-cap/plan`, button);
    expect(stale.status).toBe(409);
    expect(notices(await stale.text())).toEqual([
      `warn: Nothing was saved: these values changed after this page was shown. The calls cap is now 8 (the organization&#39;s own). This period: 12, set for this period only. Last changed by ${change.actor}, ${formats('en').dateTime(change.at)}: Set the calls cap to 12 for this period only: this month: twelve. The form below keeps what you typed: save it again to put it over the values now.`,
    ]);
    expect(await capsOf(org.id)).toEqual({ calls_cap_per_period: 8, calls_cap_own: true, calls_cap: 12 });
    expect(await capRows(org.id)).toEqual(ledger);
  });
});

describe('operator organization forms', () => {
  it('when the period form has valid credits but a negative cap, then it answers 422 and saves neither', async () => {
    const org = await createOrganization(env.db, { name: 'Operator period form test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const audits = await auditRows(org.id);

    const refused = await client.post(`${page}/period`, { ...(await client.hiddenFields(page, `${page}/period`)), creditsPerPeriod: '500', callsCap: '-5' });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('Please check the form: Calls cap per period: a whole number, 0 or more');
    expect((await organizationRow(org.id))!.credits_per_period).toBeNull();
    expect(await auditRows(org.id)).toBe(audits);

    const saved = await client.post(`${page}/period`, { ...(await client.hiddenFields(page, `${page}/period`)), creditsPerPeriod: '500', callsCap: '50' });
    expect(saved.status).toBe(200);
    expect((await organizationRow(org.id))!.credits_per_period).toBe(500);
    expect((await env.db('allowances').where({ organization_id: org.id }).first<{ calls_cap: number }>('calls_cap'))!.calls_cap).toBe(50);
  });

  it('when the limits form has a zero rate, then the message names the field by its label and nothing changes', async () => {
    const org = await createOrganization(env.db, { name: 'Operator limits form test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const refused = await client.post(`${page}/limits`, { _csrf: await client.csrf(page), perSecond: '0', burst: '', perMinute: '' });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('Please check the form: Per second: Too small: expected number to be &gt;0');
    expect((await organizationRow(org.id))!.rate_per_second).toBeNull();
  });

  it('when the page is in Italian, then a refused form says what is wrong in Italian, under the field\'s Italian label', async () => {
    const org = await createOrganization(env.db, { name: 'Operator Italian form test', planId: 'standard' });
    const client = await signedInOperator(env);
    await client.get('/language?lang=it&next=/');
    const page = `/operator/organizations/${org.id}`;
    const zero = await (await client.post(`${page}/limits`, { _csrf: await client.csrf(page), perSecond: '0', burst: '', perMinute: '' })).text();
    expect(zero).toContain('Controlla il modulo: Al secondo: Troppo piccolo');
    expect(zero).not.toContain('Too small');
    const decimal = await (await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind: 'grant', credits: '1,5', reason: 'prova' })).text();
    expect(decimal).toContain('Controlla il modulo: Crediti: un numero intero di sole cifre, ad es. 1000: senza separatori, perché 1.000 è mille in italiano ma uno in inglese');
    // Refusals core words by hand are said in Italian too, under the field's label.
    const noReason = await (await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind: 'grant', credits: '10', reason: '' })).text();
    expect(noReason).toContain('Controlla il modulo: Motivo: obbligatorio');
    const negative = await (await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind: 'top_up', credits: '-5', reason: 'prova' })).text();
    expect(negative).toContain('Controlla il modulo: Crediti: deve essere positivo');
    const noName = await (await client.post('/operator/organizations', { _csrf: await client.csrf('/operator'), name: ' ', planId: 'standard' })).text();
    expect(noName).toContain('Controlla il modulo: Nome: non può essere vuoto');
    // A message the schema wrote itself, in Italian too.
    const huge = await (await client.post(`${page}/limits`, { _csrf: await client.csrf(page), perSecond: '3000000000', burst: '', perMinute: '' })).text();
    expect(huge).toContain('Al secondo: al massimo 2147483647');
    // Units are words of the page's language, in the singular for one.
    expect(huge).toContain('1 chiamata');
    expect(huge).toContain('10 crediti');
    expect(huge).toContain('>chiamate</option>');
    expect(huge).not.toMatch(/>(credits|calls)<\/option>|\d (credits|calls)\b/);
    expect((await organizationRow(org.id))!.rate_per_second).toBeNull();
  });

  it('when a rate is larger than its column holds, then the form says so (422) instead of a 500', async () => {
    const org = await createOrganization(env.db, { name: 'Operator huge limit test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const refused = await client.post(`${page}/limits`, { _csrf: await client.csrf(page), perSecond: '3000000000', burst: '', perMinute: '' });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('Per second: at most 2147483647');
    expect((await organizationRow(org.id))!.rate_per_second).toBeNull();
  });

  it('when Save is pressed on a product row left as its plan shows it, then no override is made and nothing is logged; a price changed is an override', async () => {
    const org = await createOrganization(env.db, { name: 'Operator untouched product test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const plan = await env.db('plan_entitlements').where({ plan_id: 'standard', product: 'company-financials' }).first('quantity', 'unit');
    const row = await client.hiddenFields(page, `${page}/products`, { product: 'company-financials' });
    expect((await client.post(`${page}/products`, { ...row, enabled: '1', quantity: String(plan.quantity), unit: plan.unit })).status).toBe(200);
    expect(await env.db('organization_overrides').where({ organization_id: org.id })).toEqual([]);
    expect(await env.db('audit_log').where({ organization_id: org.id, action: 'organization.product_set' })).toEqual([]);

    const repriced = await client.hiddenFields(page, `${page}/products`, { product: 'company-financials' });
    await client.post(`${page}/products`, { ...repriced, enabled: '1', quantity: String(plan.quantity + 1), unit: plan.unit });
    expect(await env.db('organization_overrides').where({ organization_id: org.id }).select('product', 'quantity', 'unit')).toEqual([{ product: 'company-financials', quantity: plan.quantity + 1, unit: plan.unit }]);
  });

  it('when the credits form names a kind it does not offer, or the products form a unit or a product, then it is refused (422) and nothing is booked', async () => {
    const org = await createOrganization(env.db, { name: 'Operator kind form test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const rows = async () => Number((await env.db('usage_ledger').where({ organization_id: org.id }).count<{ n: string }[]>({ n: '*' }))[0]!.n);
    const before = await rows();
    for (const kind of ['refund', '']) {
      const res = await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind, credits: '10', reason: 'x' });
      expect(res.status, kind).toBe(422);
      expect(await res.text()).toContain('Please check the form: Kind: Invalid option');
    }
    expect(await rows()).toBe(before);
    const unit = await client.post(`${page}/products`, { _csrf: await client.csrf(page), product: 'company-report', enabled: '1', quantity: '2', unit: 'euros' });
    expect(unit.status).toBe(422);
    // A product the catalogue lacks, sent with a row's hidden fields: refused as such, before
    // anything is compared with what the page showed.
    const row = await client.hiddenFields(page, `${page}/products`, { product: 'company-report' });
    for (const form of [{ enabled: '1', quantity: '2', unit: 'credits' }, { reset: '1' }] as Record<string, string>[]) {
      const unknown = await client.post(`${page}/products`, { ...row, ...form, product: 'company-fax' });
      expect(unknown.status).toBe(422);
      expect(await unknown.text()).toContain('Please check the form: Product: not an endpoint or tool of the catalogue');
    }
    expect(await env.db('organization_overrides').where({ organization_id: org.id })).toEqual([]);
  });

  it('when credits are typed with a decimal part or with thousands separators then nothing is granted and the form says to type digits only; digits alone are granted', async () => {
    const org = await createOrganization(env.db, { name: 'Operator credits form test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const balance = async () => (await env.db('allowances').where({ organization_id: org.id }).first<{ credits_balance: number }>('credits_balance'))!.credits_balance;
    const opening = await balance();
    // "1.000" is a thousand to an Italian and one to an English reader (and to the browser's
    // number fields): no separator is read, in either language.
    for (const credits of ['1.5', '1,5', '12.34', '1.0000', '1,00,000', '1.000', '2,000', '3 000', '1.000.000', "1'000", '1_000']) {
      const res = await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind: 'top_up', credits, reason: `typed for ${credits}` });
      expect(res.status, credits).toBe(422);
      // The refused form comes back as it was typed, and says why.
      const body = await res.text();
      const typed = credits.replace(/[.']/g, (c) => (c === '.' ? '\\.' : '&#39;'));
      expect(body, credits).toMatch(new RegExp(`id="grant-credits"[^>]*value="${typed}"|value="${typed}"[^>]*id="grant-credits"`));
      expect(body, credits).toContain('<p class="field-error" id="grant-credits-error">a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English</p>');
      expect(body).toMatch(/<option value="top_up" selected>/);
    }
    await client.get('/language?lang=it&next=/');
    const italian = await (await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind: 'grant', credits: '1.000', reason: 'mille' })).text();
    expect(italian).toContain('Controlla il modulo: Crediti: un numero intero di sole cifre, ad es. 1000: senza separatori, perché 1.000 è mille in italiano ma uno in inglese');
    expect(await balance()).toBe(opening);
    for (const credits of ['1000', ' 2000 ', '1000000']) {
      expect((await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind: 'grant', credits, reason: 'test' })).status, credits).toBe(200);
    }
    expect(await balance()).toBe(opening + 1_000 + 2_000 + 1_000_000);
  });

  it('when an invitation\'s e-mail is refused, then it comes back as typed, with the role chosen, and why under it; the language switch leads to the page', async () => {
    const org = await createOrganization(env.db, { name: 'Operator invite form test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const refused = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: 'ada@localhost', role: 'finance' });
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(body).toMatch(/<input id="invite-email" name="email" type="email" value="ada@localhost"[^>]* aria-invalid="true" aria-describedby="invite-email-error">/);
    expect(body).toMatch(/<p class="field-error" id="invite-email-error">Enter an e-mail address like name@company.it<\/p>/);
    expect(body).toMatch(/<option value="finance" selected>/);
    // The language switch leads back to the organization's page, not to the form's address.
    expect(body).toContain(`href="/language?lang=it&amp;next=${encodeURIComponent(page)}"`);
    expect(await env.db('invitations').where({ organization_id: org.id })).toEqual([]);
  });

  it('when a product\'s quantity is refused, then that product\'s row comes back as typed, with why under it, and the other rows as they were', async () => {
    const org = await createOrganization(env.db, { name: 'Operator product form test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const refused = await client.post(`${page}/products`, { _csrf: await client.csrf(page), product: 'company-financials', quantity: '7.5', unit: 'calls' });
    expect(refused.status).toBe(422);
    const body = await refused.text();
    const row = (slug: string) => new RegExp(`<input type="hidden" name="product" value="${slug}">[\\s\\S]*?</form>`).exec(body)![0];
    const mine = row('company-financials');
    expect(mine).toContain('value="7.5" aria-invalid="true" aria-describedby="prod-company-financials-q-error"');
    expect(mine).toMatch(/<p class="field-error" id="prod-company-financials-q-error">a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English<\/p>/);
    // Unticked and in calls, as sent.
    expect(mine).not.toContain('checked');
    expect(mine).toContain('<option value="calls" selected>');
    const other = row('company-profile');
    expect(other).toContain('name="enabled" value="1" checked');
    expect(other).not.toContain('field-error');
    expect(await env.db('organization_overrides').where({ organization_id: org.id })).toEqual([]);
  });

  it('when the limits form has several bad fields, then every one is named, in the notice and under the field, as typed', async () => {
    const org = await createOrganization(env.db, { name: 'Operator limits fields test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const refused = await client.post(`${page}/limits`, { _csrf: await client.csrf(page), perSecond: '1,5', burst: '0', perMinute: '3000000000' });
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(body).toContain('Please check the form: Per second: a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English; Burst: Too small: expected number to be &gt;0; Per minute: at most 2147483647');
    expect(body).toMatch(/value="1,5"[^>]* aria-invalid="true" aria-describedby="limit-second-error">\s*<p class="field-error" id="limit-second-error">a whole number/);
    expect(body).toMatch(/value="0"[^>]* aria-invalid="true" aria-describedby="limit-burst-error">\s*<p class="field-error" id="limit-burst-error">Too small/);
    expect(body).toMatch(/value="3000000000"[^>]* aria-invalid="true" aria-describedby="limit-minute-error">\s*<p class="field-error" id="limit-minute-error">at most 2147483647/);
    // The period form, too, names both of its fields.
    const period = await (await client.post(`${page}/period`, { ...(await client.hiddenFields(page, `${page}/period`)), creditsPerPeriod: 'many', callsCap: '1.5' })).text();
    expect(period).toContain('Please check the form: Credits per period: a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English; Calls cap per period: a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English');
    expect(await env.db('organizations').where({ id: org.id }).first('rate_per_second', 'burst', 'rate_per_minute', 'credits_per_period')).toEqual({ rate_per_second: null, burst: null, rate_per_minute: null, credits_per_period: null });
  });

  it('when a number field is given digits too many for a number, then it is refused by its bound (the field\'s own where smaller), not as separators, and nothing changes', async () => {
    const org = await createOrganization(env.db, { name: 'Operator huge numbers test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const audits = await auditRows(org.id);
    const post = async (path: string, form: Record<string, string>) => {
      const res = await client.post(`${page}/${path}`, { _csrf: await client.csrf(page), ...form });
      expect(res.status).toBe(422);
      return res.text();
    };
    const twenty = '99999999999999999999';
    expect(await post('credits', { kind: 'top_up', credits: twenty, reason: 'test' })).toContain('Please check the form: Credits: at most 9007199254740991');
    expect(await post('credits', { kind: 'adjustment', credits: `-${twenty}`, reason: 'test' })).toContain('Please check the form: Credits: at least -9007199254740991');
    expect(await post('period', { creditsPerPeriod: '1'.repeat(40), callsCap: '' })).toContain('Please check the form: Credits per period: at most 9007199254740991');
    // A billion a month at most: each rollover adds it to a balance kept exact up to 2^53 only.
    expect(await post('period', { creditsPerPeriod: '9007199254740991', callsCap: '' })).toContain('Please check the form: Credits per period: at most 1000000000');
    expect(await post('limits', { perSecond: twenty, burst: '', perMinute: '' })).toContain('Please check the form: Per second: at most 2147483647');
    await client.get('/language?lang=it&next=/');
    expect(await post('credits', { kind: 'adjustment', credits: `-${twenty}`, reason: 'test' })).toContain('Crediti: almeno -9007199254740991');
    expect(await auditRows(org.id)).toEqual(audits);
  });

  it('when the credits, period or products form has two bad fields, then both are named at once, each under its field, as typed, in the page\'s language, and nothing changes', async () => {
    const org = await createOrganization(env.db, { name: 'Operator two bad fields test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const ledgerRows = async () => Number((await env.db('usage_ledger').where({ organization_id: org.id }).count<{ n: string }[]>({ n: '*' }))[0]!.n);
    const ledger = await ledgerRows();
    const audits = await auditRows(org.id);

    const credits = await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind: 'top_up', credits: '1,5', reason: '' });
    expect(credits.status).toBe(422);
    const creditsBody = await credits.text();
    expect(creditsBody).toContain('Please check the form: Credits: a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English; Reason: required');
    expect(creditsBody).toMatch(/id="grant-credits"[^>]* value="1,5"[^>]* aria-invalid="true" aria-describedby="grant-credits-error">\s*<p class="field-error" id="grant-credits-error">a whole number/);
    expect(creditsBody).toMatch(/id="grant-reason"[^>]* aria-invalid="true" aria-describedby="grant-reason-help grant-reason-error">\s*<p class="field-error" id="grant-reason-error">required<\/p>/);
    // A top-up of less than nothing, and no reason: both, too.
    const negative = await (await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind: 'top_up', credits: '-5', reason: ' ' })).text();
    expect(negative).toContain('<p class="field-error" id="grant-credits-error">must be positive: a grant or top-up adds credits; an adjustment can remove them</p>');
    expect(negative).toContain('<p class="field-error" id="grant-reason-error">required</p>');

    const period = await client.post(`${page}/period`, { ...(await client.hiddenFields(page, `${page}/period`)), creditsPerPeriod: '-5', callsCap: 'abc' });
    expect(period.status).toBe(422);
    const periodBody = await period.text();
    expect(periodBody).toContain('Please check the form: Credits per period: a whole number, 0 or more; Calls cap per period: a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English');
    expect(periodBody).toMatch(/value="-5"[^>]* aria-invalid="true" aria-describedby="credits-per-period-help credits-per-period-error">\s*<p class="field-error" id="credits-per-period-error">a whole number, 0 or more<\/p>/);
    expect(periodBody).toMatch(/value="abc"[^>]* aria-invalid="true" aria-describedby="calls-cap-help calls-cap-error">\s*<p class="field-error" id="calls-cap-error">a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English<\/p>/);

    const product = await (await client.post(`${page}/products`, { _csrf: await client.csrf(page), product: 'company-financials', enabled: '1', quantity: '-1', unit: 'euros' })).text();
    expect(product).toContain('<p class="field-error" id="prod-company-financials-q-error">a whole number, 0 or more</p>');
    expect(product).toMatch(/<p class="field-error" id="prod-company-financials-u-error">Invalid option/);
    const dear = await (await client.post(`${page}/products`, { _csrf: await client.csrf(page), product: 'company-financials', enabled: '1', quantity: '1000000001', unit: 'credits' })).text();
    expect(dear).toContain('<p class="field-error" id="prod-company-financials-q-error">at most 1000000000</p>');

    // The tester's two, in Italian.
    await client.get('/language?lang=it&next=/');
    const italianCredits = await (await client.post(`${page}/credits`, { _csrf: await client.csrf(page), kind: 'top_up', credits: '1,5', reason: '' })).text();
    expect(italianCredits).toContain('Controlla il modulo: Crediti: un numero intero di sole cifre, ad es. 1000: senza separatori, perché 1.000 è mille in italiano ma uno in inglese; Motivo: obbligatorio');
    const italianPeriod = await (await client.post(`${page}/period`, { ...(await client.hiddenFields(page, `${page}/period`)), creditsPerPeriod: '-5', callsCap: 'abc' })).text();
    expect(italianPeriod).toContain('<p class="field-error" id="credits-per-period-error">un numero intero, 0 o più</p>');
    expect(italianPeriod).toContain('<p class="field-error" id="calls-cap-error">un numero intero di sole cifre, ad es. 1000: senza separatori, perché 1.000 è mille in italiano ma uno in inglese</p>');

    expect(await ledgerRows()).toBe(ledger);
    expect(await auditRows(org.id)).toBe(audits);
    expect((await organizationRow(org.id))!.credits_per_period).toBeNull();
    expect(await env.db('organization_overrides').where({ organization_id: org.id })).toEqual([]);
  });

  it('when the limits contradict each other, or the plan\'s, then they are refused with a clear message under each field, in English and Italian, and nothing changes', async () => {
    const org = await createOrganization(env.db, { name: 'Operator contradictory limits test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const both = await client.post(`${page}/limits`, { ...(await client.hiddenFields(page, `${page}/limits`)), perSecond: '10', burst: '5', perMinute: '3' });
    expect(both.status).toBe(422);
    const body = await both.text();
    expect(body).toContain('Please check the form: Burst: must be at least the per-second limit (10); Per minute: must be at least the per-second limit (10)');
    expect(body).toContain('<p class="field-error" id="limit-burst-error">must be at least the per-second limit (10)</p>');
    expect(body).toContain('<p class="field-error" id="limit-minute-error">must be at least the per-second limit (10)</p>');
    expect(body).not.toContain('id="limit-second-error"');
    // The standard plan's burst is 40: 50 a second alone contradicts it, under the burst field.
    await client.get('/language?lang=it&next=/');
    const italian = await (await client.post(`${page}/limits`, { ...(await client.hiddenFields(page, `${page}/limits`)), perSecond: '50', burst: '', perMinute: '' })).text();
    expect(italian).toContain('Controlla il modulo: Burst: deve essere almeno pari al limite al secondo (50)');
    expect(italian).toContain('<p class="field-error" id="limit-burst-error">deve essere almeno pari al limite al secondo (50)</p>');
    expect(await env.db('organizations').where({ id: org.id }).first('rate_per_second', 'burst', 'rate_per_minute')).toEqual({ rate_per_second: null, burst: null, rate_per_minute: null });
    expect(await env.db('audit_log').where({ organization_id: org.id, action: 'organization.limits_set' })).toEqual([]);
  });
});

