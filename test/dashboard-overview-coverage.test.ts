import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../core/auth/index.js';
import { changeCredits, setProductOverride } from '../core/billing/index.js';
import { ensureExampleCompany, exampleCompanyCode, startTestApi, type TestApi } from './api-fixtures.js';
import { adminOfNewOrg, applyBusEventsOf, applyUsage, dashboardForFile, signedInOperator, usageEventFor } from './dashboard-fixtures.js';

// The Overview when the balance pays for some of the organization's products and not others:
// the API refuses each call dearer than the balance (402 credits_exhausted) while the flag,
// which waits for the cheapest product (a 1-credit search tool on the standard plan), is down.

const env = dashboardForFile();
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
  await ensureExampleCompany(api.db);
});
afterAll(async () => {
  await api?.close();
});

/** What the real API answers the organization's key for each endpoint: status and error code. */
async function apiAnswers(orgId: string, endpoints: string[]): Promise<Record<string, string>> {
  const { key } = await createApiKey(env.db, { organizationId: orgId, name: 'Overview test' });
  const answers: Record<string, string> = {};
  for (const endpoint of endpoints) {
    const res = await fetch(`${api.url}/companies/${exampleCompanyCode}/${endpoint}`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { error?: { code: string } };
    answers[endpoint] = `${res.status}${body.error ? ` ${body.error.code}` : ''}`;
  }
  // Served calls are charged: applied now, as the billing worker would, not left on the bus.
  await applyBusEventsOf(env.db, orgId);
  return answers;
}

const flagsStat = (html: string) => /<div class="stat-label">(?:Status|Stato)<\/div><div class="stat-value">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';
const coverage = (html: string) => {
  const m = /<div class="notice notice-warn" role="alert" id="credits-coverage">([\s\S]*?)<\/div>/.exec(html);
  return m ? m[1]!.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim() : null;
};

/** A standard-plan organization (100,000 credits granted) brought down to `balance` credits, the last of it by calls the billing worker's code applies. */
async function organizationWithBalance(name: string, balance: number) {
  const org = await adminOfNewOrg(env, name);
  await changeCredits(env.db, { organizationId: org.orgId, kind: 'adjustment', credits: balance + 16 - 100_000, actor: 'cli:maria', reason: 'test set-up' });
  await applyUsage(env.db, [usageEventFor(org.orgId, { product: 'company-profile', quantity: 8 }), usageEventFor(org.orgId, { product: 'company-profile', quantity: 8 })]);
  return org;
}

describe('overview: what the balance still pays for', () => {
  it('when the balance is below some products\' prices but not the cheapest one\'s then the overview does not say Active: it names the products refused and those still paid, and the top-up that pays them all, in English and Italian', async () => {
    const { orgId, client } = await organizationWithBalance('Overview coverage test', 4);
    expect(await env.db('allowances').where({ organization_id: orgId }).first('credits_balance', 'credits_exhausted')).toEqual({ credits_balance: 4, credits_exhausted: false });

    const page = await (await client.get(`/orgs/${orgId}`)).text();
    expect(flagsStat(page)).toBe('<span class="badge badge-warn">Balance too low for some products</span>');
    expect(coverage(page)).toBe(
      'The balance of 4 credits no longer pays for some products: their calls are refused (402 credits_exhausted) although credits remain. '
      + 'Refused at this balance: company-credit-report (API, 10 credits), service_analyze_company (MCP tool, 10 credits), company-profile (API, 8 credits), '
      + 'service_get_company_profile (MCP tool, 8 credits), company-financials (API, 5 credits), service_get_company_metrics (MCP tool, 5 credits), '
      + 'service_get_company_structure (MCP tool, 5 credits). '
      + 'Still paid: service_search_companies (MCP tool, 1 credit), service_search_people (MCP tool, 1 credit). '
      + 'What to do: top up at least 6 credits to call every product again.',
    );

    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}`)).text();
    expect(flagsStat(italian)).toBe('<span class="badge badge-warn">Saldo insufficiente per alcuni prodotti</span>');
    const said = coverage(italian)!;
    expect(said).toMatch(/^Il saldo di 4 crediti non paga più alcuni prodotti: le loro chiamate sono rifiutate \(402 credits_exhausted\) anche se restano crediti\. Rifiutati con questo saldo: company-credit-report \(API, 10 crediti\), service_analyze_company \(strumento MCP, 10 crediti\),/);
    expect(said).toContain('Ancora pagati: service_search_companies (strumento MCP, 1 credito), service_search_people (strumento MCP, 1 credito).');
    expect(said).toContain('Cosa fare: ricaricare almeno 6 crediti per chiamare di nuovo ogni prodotto.');

    // The operator's page of the organization says the same, not "OK".
    const operator = await signedInOperator(env);
    expect(flagsStat(await (await operator.get(`/operator/organizations/${orgId}`)).text())).toBe('<span class="badge badge-warn">Balance too low for some products</span>');

    // What the API does meanwhile: every endpoint priced in credits is refused.
    expect(await apiAnswers(orgId, ['credit-report', 'profile', 'financials'])).toEqual({ 'credit-report': '402 credits_exhausted', profile: '402 credits_exhausted', financials: '402 credits_exhausted' });
  });

  it('when the organization\'s own prices change what the balance pays for, then the overview follows them, as the API does', async () => {
    const { orgId, client } = await organizationWithBalance('Overview coverage override test', 4);
    // The credit report at 3 credits for this organization; the analysis tool removed; the
    // profile free of charge (never refused for credits); the search tools call-priced.
    await setProductOverride(env.db, orgId, 'company-credit-report', { quantity: 3 });
    await setProductOverride(env.db, orgId, 'service_analyze_company', { enabled: false });
    await setProductOverride(env.db, orgId, 'company-profile', { quantity: 0 });
    await setProductOverride(env.db, orgId, 'service_search_companies', { quantity: 1, unit: 'calls' });
    await setProductOverride(env.db, orgId, 'service_search_people', { quantity: 1, unit: 'calls' });
    const said = coverage(await (await client.get(`/orgs/${orgId}`)).text());
    expect(said).toContain('Refused at this balance: service_get_company_profile (MCP tool, 8 credits), company-financials (API, 5 credits), service_get_company_metrics (MCP tool, 5 credits), service_get_company_structure (MCP tool, 5 credits).');
    expect(said).toContain('Still paid: company-credit-report (API, 3 credits).');
    expect(said).toContain('top up at least 4 credits');
    expect(said).not.toMatch(/company-profile \(|service_analyze_company|service_search/);
    // The API agrees (the credit report last: once served, 1 credit is left).
    expect(await apiAnswers(orgId, ['financials', 'profile', 'credit-report'])).toEqual({ financials: '402 credits_exhausted', profile: '200', 'credit-report': '200' });
  });

  it('when the balance pays for every product, or for none (the flag up), then the overview says Active, or credits exhausted, and lists nothing', async () => {
    const { orgId, client } = await organizationWithBalance('Overview coverage boundaries test', 4);
    await changeCredits(env.db, { organizationId: orgId, kind: 'top_up', credits: 6, actor: 'cli:maria', reason: 'invoice paid' });
    const paid = await (await client.get(`/orgs/${orgId}`)).text();
    expect(flagsStat(paid)).toBe('<span class="badge badge-good">Active</span>');
    expect(coverage(paid)).toBeNull();

    await changeCredits(env.db, { organizationId: orgId, kind: 'adjustment', credits: -10, actor: 'cli:maria', reason: 'correction' });
    const exhausted = await (await client.get(`/orgs/${orgId}`)).text();
    expect(flagsStat(exhausted)).toBe('<span class="badge badge-bad">Credits exhausted</span>');
    expect(exhausted).toContain('Credits are exhausted: calls to credit-priced products are refused until a top-up; call-priced ones are still served up to the call cap.');
    expect(coverage(exhausted)).toBeNull();
  });
});
