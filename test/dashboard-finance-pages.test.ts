import { describe, expect, it } from 'vitest';
import { changeCredits } from '../core/billing/index.js';
import { adminOfNewOrg, createOperator, dashboardForFile, httpSession } from './dashboard-fixtures.js';

// The finance pages over plain HTTP, with addresses people (or their bookmarks) get wrong.

const env = dashboardForFile();

describe('finance pages', () => {
  it('when the month in the address is past what the pages can show (9999-12), then usage, report and CSV show the current month instead of failing', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance far period test');
    for (const path of ['usage', 'report', 'report.csv', 'ledger']) {
      const res = await client.get(`/orgs/${orgId}/${path}?period=9999-12`);
      expect(res.status, path).toBe(200);
    }
    const csv = await (await client.get(`/orgs/${orgId}/report.csv?period=9999-12`)).text();
    const thisMonth = new Date().toISOString().slice(0, 7);
    expect(csv).toContain(`summary,period,,${thisMonth},,,`);
  });

  it('when the month in the address has not begun, then the report and its CSV show the current month, not a month that looks final with today\'s balance', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance future period test');
    const thisMonth = new Date().toISOString().slice(0, 7);
    const nextYear = `${Number(thisMonth.slice(0, 4)) + 1}-01`;
    const report = await client.get(`/orgs/${orgId}/report?period=${nextYear}`);
    expect(report.status).toBe(200);
    expect(await report.text()).toContain(`value="${thisMonth}" selected`);
    const csv = await (await client.get(`/orgs/${orgId}/report.csv?period=${nextYear}`)).text();
    expect(csv).toContain(`summary,period,,${thisMonth},,,`);
    expect(csv).not.toContain(nextYear);
  });

  it('when credits were granted by a person then the ledger, the report and its CSV name them by e-mail, and other actors as recorded', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance actor test');
    const operator = await createOperator(env.db);
    const op = httpSession(env.dashboard.url);
    await op.signIn(operator.email, operator.password);
    const page = `/operator/organizations/${orgId}`;
    expect((await op.post(`${page}/credits`, { _csrf: await op.csrf(page), kind: 'grant', credits: '500', reason: 'contract bonus' })).status).toBe(200);
    await changeCredits(env.db, { organizationId: orgId, kind: 'top_up', credits: 100, actor: 'cli:maria', reason: 'invoice 7' });

    const ledger = await (await client.get(`/orgs/${orgId}/ledger`)).text();
    expect(ledger).toContain(`contract bonus <span class="muted small">· ${operator.email}</span>`);
    expect(ledger).toContain('invoice 7 <span class="muted small">· cli:maria</span>');
    expect(ledger).not.toMatch(/· usr_/);
    const report = await (await client.get(`/orgs/${orgId}/report`)).text();
    expect(report).toContain(operator.email);
    const csv = await (await client.get(`/orgs/${orgId}/report.csv`)).text();
    expect(csv).toMatch(new RegExp(`^entry,grant,[^,]+,500,credits,,${operator.email.replaceAll('.', '\\.')}: contract bonus$`, 'm'));
    expect(csv).toMatch(/^entry,top_up,[^,]+,100,credits,,cli:maria: invoice 7$/m);
  });
});
