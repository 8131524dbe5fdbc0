import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createOrganization, ensurePlan, productCatalogue } from '../core/billing/index.js';
import { formats } from '../dashboard/i18n/translate.js';
import { dashboardForFile, hiddenFieldsOf, signedInOperator } from './dashboard-fixtures.js';
import { runCli } from './support/run-cli.js';

// The operator's plan, rate limits and product forms are saved only over the values the page
// showed, as the period form is (test/dashboard-operator.test.ts): a change made meanwhile, with
// the real CLI, is not put back. Over plain HTTP against the real dashboard and PostgreSQL.

const env = dashboardForFile();
const cli = (...args: string[]) => runCli(inject('databaseUrl'), ...args);

const notices = (body: string) => [...body.matchAll(/<div class="notice notice-(\w+)" role="\w+">([^<]*)<\/div>/g)].map((m) => `${m[1]}: ${m[2]}`);
const lastAudit = (id: string) => env.db('audit_log').where({ organization_id: id }).orderBy('id', 'desc').first<{ actor: string; at: Date }>('actor', 'at');
/** Every ledger and activity row of the organization: what "nothing written" compares. */
const written = async (id: string) => ({
  ledger: await env.db('usage_ledger').where({ organization_id: id }).orderBy('id').pluck('id'),
  audit: await env.db('audit_log').where({ organization_id: id }).orderBy('id').pluck('id'),
});
const auditOf = (id: string, action: string) => env.db('audit_log').where({ organization_id: id, action }).orderBy('id').pluck('details');
const en = formats('en');
const it_ = formats('it');
const NOTHING_SAVED = 'Nothing was saved: these values changed after this page was shown.';
const SAVE_AGAIN = 'The form below keeps what you typed: save it again to put it over the values now.';
const NIENTE_SALVATO = 'Non è stato salvato nulla: questi valori sono cambiati dopo che la pagina è stata mostrata.';
const SALVA_DI_NUOVO = 'Il modulo qui sotto conserva quanto hai scritto: salvalo di nuovo per applicarlo sui valori attuali.';

/** A plan of this test's own, its id after `standard` (the list's first plan stays the default). */
async function newPlan(limits = { perSecond: 5, burst: 10, perMinute: 100 }, callsCap = 50) {
  const id = `test_plan_${randomUUID().slice(0, 8)}`;
  await ensurePlan(env.db, {
    id, name: `Stale form plan ${id}`, limits, creditsPerPeriod: 1_000, callsCapPerPeriod: callsCap,
    products: productCatalogue.map((p) => ({ product: p.slug, kind: p.kind, quantity: p.slug === 'company-financials' ? 2 : p.defaultMeasure.quantity, unit: p.defaultMeasure.unit })),
  });
  return id;
}

async function operatorOnNewOrganization(name: string) {
  const org = await createOrganization(env.db, { name, planId: 'standard' });
  const client = await signedInOperator(env);
  return { org, client, page: `/operator/organizations/${org.id}` };
}

const planOf = async (id: string) => (await env.db('organizations').where({ id }).first<{ plan_id: string | null }>('plan_id'))!.plan_id;

describe('operator plan form: saved only over the plan the page showed', () => {
  it('when the plan is changed from the CLI while the page is open, then saving another plan changes nothing (no ledger or activity row) and says the plan now and who moved it when, in English and Italian; saved again from that page, it applies', async () => {
    const [wanted, meanwhile] = [await newPlan(), await newPlan({ perSecond: 7, burst: 14, perMinute: 140 }, 70)];
    const { org, client, page } = await operatorOnNewOrganization('Operator stale plan test');
    const action = `${page}/plan`;
    const shown = await client.hiddenFields(page, action);
    const moved = await cli('org', 'set-plan', org.id, meanwhile);
    expect(moved.code, moved.stderr).toBe(0);
    const change = (await lastAudit(org.id))!;
    const before = await written(org.id);

    const stale = await client.post(action, { ...shown, planId: wanted });
    expect(stale.status).toBe(409);
    const body = await stale.text();
    expect(notices(body)).toEqual([
      `warn: ${NOTHING_SAVED} The plan is now ${meanwhile}. Last changed by ${change.actor}, ${en.dateTime(change.at)}: Set the plan to ${meanwhile}. ${SAVE_AGAIN}`,
    ]);
    expect(await planOf(org.id)).toBe(meanwhile);
    expect(await written(org.id)).toEqual(before);
    // The plan chosen stays chosen, in a form drawn over the plan now.
    expect(body).toContain(`<option value="${wanted}" selected>`);
    expect(hiddenFieldsOf(body, action).shownPlan).toBe(meanwhile);

    await client.get('/language?lang=it&next=/');
    const italian = await client.post(action, { ...shown, planId: wanted });
    expect(italian.status).toBe(409);
    expect(notices(await italian.text())).toEqual([
      `warn: ${NIENTE_SALVATO} Il piano ora è ${meanwhile}. Ultima modifica di ${change.actor}, ${it_.dateTime(change.at)}: Impostato il piano ${meanwhile}. ${SALVA_DI_NUOVO}`,
    ]);
    expect(await written(org.id)).toEqual(before);

    const saved = await client.post(action, { ...hiddenFieldsOf(body, action), planId: wanted });
    expect(saved.status).toBe(200);
    expect(await planOf(org.id)).toBe(wanted);
    expect(await auditOf(org.id, 'organization.plan_set')).toEqual([{ planId: meanwhile }, { planId: wanted }]);
  });

  it('when the page showed the plan the organization is on, then a save applies; sent twice at once (a double-click), the plan moves once, with one activity row and one cap change, and both answers say Saved.', async () => {
    const wanted = await newPlan();
    const { org, client, page } = await operatorOnNewOrganization('Operator plan double save test');
    const action = `${page}/plan`;
    const shown = await client.hiddenFields(page, action);
    const before = await written(org.id);
    const answers = await Promise.all([1, 2].map(() => client.post(action, { ...shown, planId: wanted })));
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    for (const body of await Promise.all(answers.map((r) => r.text()))) expect(notices(body)).toEqual(['good: Saved.']);
    expect(await planOf(org.id)).toBe(wanted);
    expect(await auditOf(org.id, 'organization.plan_set')).toEqual([{ planId: wanted }]);
    const after = await written(org.id);
    expect(after.audit).toHaveLength(before.audit.length + 1);
    // The new plan's cap (50 where standard's is 100,000): one cap change on the ledger.
    expect(after.ledger).toHaveLength(before.ledger.length + 1);
    expect(await env.db('allowances').where({ organization_id: org.id }).first('calls_cap')).toEqual({ calls_cap: 50 });
  });
});

const limitsOf = (id: string) => env.db('organizations').where({ id }).first<{ rate_per_second: number | null; burst: number | null; rate_per_minute: number | null }>('rate_per_second', 'burst', 'rate_per_minute');

describe('operator rate limits form: saved only over the limits the page showed', () => {
  it('when limits are set from the CLI while the page is open, then saving other limits changes nothing (no activity row) and says the limits now, the plan\'s where none is the organization\'s, and who set them when, in English and Italian; saved again from that page, they apply', async () => {
    const { org, client, page } = await operatorOnNewOrganization('Operator stale limits test');
    const action = `${page}/limits`;
    const shown = await client.hiddenFields(page, action);
    const set = await cli('org', 'set-limits', org.id, '--per-second', '5', '--burst', '10');
    expect(set.code, set.stderr).toBe(0);
    const change = (await lastAudit(org.id))!;
    const before = await written(org.id);
    const typed = { perSecond: '30', burst: '60', perMinute: '900' };

    const stale = await client.post(action, { ...shown, ...typed });
    expect(stale.status).toBe(409);
    const body = await stale.text();
    expect(notices(body)).toEqual([
      `warn: ${NOTHING_SAVED} The rate limits are now: per second 5, burst 10, per minute 600 (the plan&#39;s). Last changed by ${change.actor}, ${en.dateTime(change.at)}: Set rate limits: per second 5, burst 10, per minute the plan&#39;s. ${SAVE_AGAIN}`,
    ]);
    expect(await limitsOf(org.id)).toEqual({ rate_per_second: 5, burst: 10, rate_per_minute: null });
    expect(await written(org.id)).toEqual(before);
    // What was typed stays in the fields, drawn over the limits now.
    for (const [id, value] of [['limit-second', '30'], ['limit-burst', '60'], ['limit-minute', '900']]) expect(body).toMatch(new RegExp(`<input id="${id}" [^>]*value="${value}"`));

    await client.get('/language?lang=it&next=/');
    const italian = await client.post(action, { ...shown, ...typed });
    expect(italian.status).toBe(409);
    expect(notices(await italian.text())).toEqual([
      `warn: ${NIENTE_SALVATO} I limiti ora sono: al secondo 5, burst 10, al minuto 600 (quello del piano). Ultima modifica di ${change.actor}, ${it_.dateTime(change.at)}: Impostati i limiti: al secondo 5, burst 10, al minuto come da piano. ${SALVA_DI_NUOVO}`,
    ]);
    expect(await written(org.id)).toEqual(before);

    const saved = await client.post(action, { ...hiddenFieldsOf(body, action), ...typed });
    expect(saved.status).toBe(200);
    expect(await limitsOf(org.id)).toEqual({ rate_per_second: 30, burst: 60, rate_per_minute: 900 });
    expect(await auditOf(org.id, 'organization.limits_set')).toEqual([{ perSecond: 5, burst: 10, perMinute: null }, { perSecond: 30, burst: 60, perMinute: 900 }]);
  });

  it('when the page showed the limits as they are, then a save applies; sent twice at once (a double-click), one activity row, and both answers say Saved.', async () => {
    const { org, client, page } = await operatorOnNewOrganization('Operator limits double save test');
    const action = `${page}/limits`;
    const shown = await client.hiddenFields(page, action);
    const before = await written(org.id);
    const answers = await Promise.all([1, 2].map(() => client.post(action, { ...shown, perSecond: '3', burst: '', perMinute: '' })));
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    for (const body of await Promise.all(answers.map((r) => r.text()))) expect(notices(body)).toEqual(['good: Saved.']);
    expect(await limitsOf(org.id)).toEqual({ rate_per_second: 3, burst: null, rate_per_minute: null });
    expect(await auditOf(org.id, 'organization.limits_set')).toEqual([{ perSecond: 3, burst: null, perMinute: null }]);
    expect((await written(org.id)).audit).toHaveLength(before.audit.length + 1);
  });
});

const overrideOf = (id: string, product: string) => env.db('organization_overrides').where({ organization_id: id, product }).first<{ enabled: boolean; quantity: number | null; unit: string | null } | undefined>('enabled', 'quantity', 'unit');
/** One product's row of the page, its form and what it shows. */
const productRow = (body: string, product: string) => new RegExp(`<input type="hidden" name="product" value="${product}">[\\s\\S]*?</form>`).exec(body)![0];

describe('operator product forms: each saved only over its own row as the page showed it', () => {
  it('when a product\'s override is set from the CLI while the page is open, then saving that row changes nothing (no ledger or activity row) and says what the product costs now and who set it when, in English and Italian; another product\'s row saves; saved again from that page, it applies', async () => {
    const { org, client, page } = await operatorOnNewOrganization('Operator stale product test');
    const action = `${page}/products`;
    const shownPage = await (await client.get(page)).text();
    const financials = hiddenFieldsOf(shownPage, action, { product: 'company-financials' });
    const profile = hiddenFieldsOf(shownPage, action, { product: 'company-profile' });
    const set = await cli('org', 'override', org.id, 'company-financials', '--quantity', '3', '--unit', 'calls');
    expect(set.code, set.stderr).toBe(0);
    const change = (await lastAudit(org.id))!;
    const before = await written(org.id);
    const typed = { enabled: '1', quantity: '7', unit: 'credits' };

    const stale = await client.post(action, { ...financials, ...typed });
    expect(stale.status).toBe(409);
    const body = await stale.text();
    expect(notices(body)).toEqual([
      `warn: ${NOTHING_SAVED} Product company-financials now costs 3 calls (the organization&#39;s override). Last changed by ${change.actor}, ${en.dateTime(change.at)}: Set product company-financials to 3 calls. ${SAVE_AGAIN}`,
    ]);
    expect(await overrideOf(org.id, 'company-financials')).toEqual({ enabled: true, quantity: 3, unit: 'calls' });
    expect(await written(org.id)).toEqual(before);
    // The row keeps what was typed; the other rows show what is so.
    expect(productRow(body, 'company-financials')).toMatch(/value="7"[\s\S]*<option value="credits" selected>/);
    expect(productRow(body, 'company-profile')).toMatch(/value="8"[\s\S]*<option value="credits" selected>/);

    // Another product's row of the same page: its product did not change, so it saves.
    const other = await client.post(action, { ...profile, enabled: '1', quantity: '9', unit: 'credits' });
    expect(other.status).toBe(200);
    expect(await overrideOf(org.id, 'company-profile')).toEqual({ enabled: true, quantity: 9, unit: 'credits' });

    // In Italian, still naming the CLI's change of this product, not the save of the other.
    await client.get('/language?lang=it&next=/');
    const italian = await client.post(action, { ...financials, ...typed });
    expect(italian.status).toBe(409);
    expect(notices(await italian.text())).toEqual([
      `warn: ${NIENTE_SALVATO} Il prodotto company-financials ora costa 3 chiamate (personalizzato per l&#39;organizzazione). Ultima modifica di ${change.actor}, ${it_.dateTime(change.at)}: Impostato il prodotto company-financials a 3 chiamate. ${SALVA_DI_NUOVO}`,
    ]);
    expect(await overrideOf(org.id, 'company-financials')).toEqual({ enabled: true, quantity: 3, unit: 'calls' });

    const saved = await client.post(action, { ...hiddenFieldsOf(body, action, { product: 'company-financials' }), ...typed });
    expect(saved.status).toBe(200);
    expect(await overrideOf(org.id, 'company-financials')).toEqual({ enabled: true, quantity: 7, unit: 'credits' });
    expect((await auditOf(org.id, 'organization.product_set')).filter((d) => (d as { product: string }).product === 'company-financials')).toEqual([
      { product: 'company-financials', enabled: true, quantity: 3, unit: 'calls' },
      { product: 'company-financials', enabled: true, quantity: 7, unit: 'credits' },
    ]);
  });

  it('when a product is turned off from the CLI while the page offers "Back to plan", then pressing it changes nothing and says the product is off; pressed twice at once from a page that shows it, the override goes once, with one activity row', async () => {
    const { org, client, page } = await operatorOnNewOrganization('Operator stale product reset test');
    const action = `${page}/products`;
    expect((await cli('org', 'override', org.id, 'company-report', '--quantity', '2', '--unit', 'credits')).code).toBe(0);
    const shown = await client.hiddenFields(page, action, { product: 'company-report' });
    const disabled = await cli('org', 'override', org.id, 'company-report', '--disable');
    expect(disabled.code, disabled.stderr).toBe(0);
    const change = (await lastAudit(org.id))!;
    const before = await written(org.id);
    const reset = { enabled: '1', quantity: '2', unit: 'credits', reset: '1' };

    const stale = await client.post(action, { ...shown, ...reset });
    expect(stale.status).toBe(409);
    expect(notices(await stale.text())).toEqual([
      `warn: ${NOTHING_SAVED} Product company-report is now turned off for this organization. Last changed by ${change.actor}, ${en.dateTime(change.at)}: Turned off product company-report. ${SAVE_AGAIN}`,
    ]);
    expect(await overrideOf(org.id, 'company-report')).toEqual({ enabled: false, quantity: null, unit: null });
    expect(await written(org.id)).toEqual(before);

    const fresh = await client.hiddenFields(page, action, { product: 'company-report' });
    const answers = await Promise.all([1, 2].map(() => client.post(action, { ...fresh, ...reset })));
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    for (const body of await Promise.all(answers.map((r) => r.text()))) expect(notices(body)).toEqual(['good: Saved.']);
    expect(await overrideOf(org.id, 'company-report')).toBeUndefined();
    expect(await auditOf(org.id, 'organization.product_reset')).toEqual([{ product: 'company-report' }]);
  });

  it('when the page showed the row as it is, then a save applies; sent twice at once (a double-click), one activity row, and both answers say Saved.', async () => {
    const { org, client, page } = await operatorOnNewOrganization('Operator product double save test');
    const action = `${page}/products`;
    const shown = await client.hiddenFields(page, action, { product: 'company-profile' });
    const before = await written(org.id);
    const answers = await Promise.all([1, 2].map(() => client.post(action, { ...shown, enabled: '1', quantity: '4', unit: 'credits' })));
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    for (const body of await Promise.all(answers.map((r) => r.text()))) expect(notices(body)).toEqual(['good: Saved.']);
    expect(await overrideOf(org.id, 'company-profile')).toEqual({ enabled: true, quantity: 4, unit: 'credits' });
    expect(await auditOf(org.id, 'organization.product_set')).toEqual([{ product: 'company-profile', enabled: true, quantity: 4, unit: 'credits' }]);
    expect((await written(org.id)).audit).toHaveLength(before.audit.length + 1);
  });
});
