import { describe, expect, it } from 'vitest';
import { changeCredits } from '../core/billing/index.js';
import { recordAudit } from '../core/dashboard-auth/index.js';
import { adminOfNewOrg, applyUsage, dashboardForFile, usageEventFor } from './dashboard-fixtures.js';

// A count and what it counts agree in both languages: '1 credit', '1 chiamata', '2 crediti'.

const env = dashboardForFile();

const period = () => new Date().toISOString().slice(0, 7);

describe('when a count is one', () => {
  it('then the activity log says it in the singular, in English and Italian, and the plural for more', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Counts activity test');
    await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'credits.grant', details: { credits: 1, reason: 'welcome' } });
    await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'credits.top_up', details: { credits: 2, reason: 'invoice 9' } });
    await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'usage.totals_rebuilt', details: { bucketsOff: 1, creditsUsedBefore: 4, creditsUsedAfter: 5 } });
    await recordAudit(env.db, {
      organizationId: orgId, actor: 'system', action: 'usage.dead_letter_replayed',
      details: { deadLetterId: 7, quantity: 1, unit: 'calls', product: 'company-report', eventId: 'req_counts' },
    });

    const english = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(english).toContain('Granted 1 credit: welcome');
    expect(english).toContain('Topped up 2 credits: invoice 9');
    expect(english).toContain('1 daily bucket was off');
    expect(english).toContain(': 1 call for company-report');
    expect(english).toContain('Page 1 of 1 · 4 rows');

    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(italian).toContain('Assegnato 1 credito: welcome');
    expect(italian).toContain('Ricaricati 2 crediti: invoice 9');
    expect(italian).toContain('1 totale giornaliero era errato');
    expect(italian).toContain(': 1 chiamata per company-report');
    expect(italian).not.toMatch(/\b1 (credits|calls|crediti|chiamate)\b/);
  });

  it('then the overview, the report and the ledger say one credit, one call and one row', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Counts overview test');
    // One credit and one call today: a burn of one of each a day.
    await applyUsage(env.db, [
      usageEventFor(orgId, { product: 'company-financials', quantity: 1, unit: 'credits' }),
      usageEventFor(orgId, { product: 'company-report', quantity: 1, unit: 'calls' }),
    ]);

    const overview = await (await client.get(`/orgs/${orgId}`)).text();
    expect(overview).toContain('1 credit and 1 call (call-priced) a day');
    const report = await (await client.get(`/orgs/${orgId}/report?period=${period()}`)).text();
    expect(report).toMatch(/<td class="num">1<\/td><td>credit<\/td>/);
    expect(report).toMatch(/<td class="num">1<\/td><td>call<\/td>/);
    const ledger = await (await client.get(`/orgs/${orgId}/ledger?type=grant`)).text();
    expect(ledger).toContain('Page 1 of 1 · 1 row<');

    client.jar.set('dash_lang', 'it');
    const overviewIt = await (await client.get(`/orgs/${orgId}`)).text();
    expect(overviewIt).toContain('1 credito e 1 chiamata (prodotti conteggiati in chiamate) al giorno');
    const reportIt = await (await client.get(`/orgs/${orgId}/report?period=${period()}`)).text();
    expect(reportIt).toMatch(/<td class="num">1<\/td><td>credito<\/td>/);
    expect(reportIt).toMatch(/<td class="num">1<\/td><td>chiamata<\/td>/);
    const ledgerIt = await (await client.get(`/orgs/${orgId}/ledger?type=grant`)).text();
    expect(ledgerIt).toContain('Pagina 1 di 1 · 1 riga<');
  });

  it('then an organization whose credits have run out is told so, not given today as a forecast', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Credits already out test');
    const { credits_balance: balance } = (await env.db('allowances').where({ organization_id: orgId }).first('credits_balance')) as { credits_balance: number };
    if (balance !== 0) await changeCredits(env.db, { organizationId: orgId, kind: 'adjustment', credits: -balance, actor: 'test', reason: 'spent elsewhere' });
    // Served past zero (the calls in flight), as the worker charges them.
    await applyUsage(env.db, [usageEventFor(orgId, { product: 'company-financials', quantity: 5, unit: 'credits' })]);
    const overview = await (await client.get(`/orgs/${orgId}`)).text();
    expect(overview).toMatch(/<div class="stat-label">Credits run out<\/div><div class="stat-value">already \(balance -5 credits\)<\/div>/);
    client.jar.set('dash_lang', 'it');
    expect(await (await client.get(`/orgs/${orgId}`)).text()).toMatch(/<div class="stat-label">Esaurimento crediti<\/div><div class="stat-value">già \(saldo -5 crediti\)<\/div>/);
  });
});
