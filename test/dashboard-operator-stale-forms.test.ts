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
