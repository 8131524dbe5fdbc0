import { describe, expect, it } from 'vitest';
import { adminOfNewOrg, dashboardForFile } from './dashboard-fixtures.js';

// The alerts page's forms over plain HTTP: what a threshold accepts, and what a refusal shows.

const env = dashboardForFile();

const thresholds = (orgId: string) => env.db('alert_thresholds').where({ organization_id: orgId }).orderBy('value').select('kind', 'value');

describe('alert threshold form', () => {
  it('when the same threshold is added twice then the second is refused with a sentence, and one is kept', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Alert duplicate test');
    const page = `/orgs/${orgId}/alerts`;
    const add = async (value: string) => client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'balance_below', value });
    expect((await add('200000')).headers.get('location')).toBe(`${page}?done=saved`);
    const again = await add('200000');
    expect(again.headers.get('location')).toBe(`${page}?error=duplicate`);
    expect(await (await client.get(`${page}?error=duplicate`)).text()).toContain('This threshold is already set.');
    expect(await thresholds(orgId)).toEqual([{ kind: 'balance_below', value: 200_000 }]);
  });

  it('when the value is blank, spaces, hexadecimal or a fraction then it is refused and nothing is saved; the audit row holds the value saved', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Alert value test');
    const page = `/orgs/${orgId}/alerts`;
    for (const value of ['', ' ', '0x10', '1.5', '1e3', '-1']) {
      const res = await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'balance_below', value });
      expect(res.headers.get('location'), JSON.stringify(value)).toBe(`${page}?error=threshold`);
    }
    expect(await thresholds(orgId)).toEqual([]);
    await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'percent_used', value: ' 80 ' });
    expect(await thresholds(orgId)).toEqual([{ kind: 'percent_used', value: 80 }]);
    expect(await env.db('audit_log').where({ organization_id: orgId, action: 'alerts.threshold_added' }).pluck('details')).toEqual([{ kind: 'percent_used', value: 80 }]);
  });

  it('when a link carries words of its own in ?error= then the page shows none of them; a known code shows its sentence in Italian', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Alert spoof test');
    const spoofed = await (await client.get(`/orgs/${orgId}/alerts?error=${encodeURIComponent('Your account is suspended: call +39 000 000')}`)).text();
    expect(spoofed).not.toContain('suspended');
    expect(spoofed).not.toContain('notice-bad');
    await client.get('/language?lang=it&next=/');
    expect(await (await client.get(`/orgs/${orgId}/alerts?error=threshold`)).text()).toContain('Una soglia è una percentuale intera da 1 a 100');
  });
});

// A dashboard as production runs it: webhooks go to public addresses only.
const production = dashboardForFile({ allowPrivateWebhookTargets: false });

describe('webhook address form, where private targets are not allowed', () => {
  it('when the address is private at sight then it is refused with a sentence and not saved; a public name is saved', async () => {
    const { orgId, client } = await adminOfNewOrg(production, 'Alert private webhook test');
    const page = `/orgs/${orgId}/alerts`;
    const save = async (webhookUrl: string) => client.post(`${page}/webhook`, { _csrf: await client.csrf(page), webhookUrl });
    for (const url of ['http://127.0.0.1:9000/hook', 'http://localhost/hook', 'http://localhost./hook', 'https://10.1.2.3/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest/meta-data']) {
      expect((await save(url)).headers.get('location'), url).toBe(`${page}?error=webhook_private`);
    }
    expect(await (await client.get(`${page}?error=webhook_private`)).text()).toContain('this service sends webhooks to public addresses only');
    expect((await production.db('alert_settings').where({ organization_id: orgId }).first('webhook_url'))?.webhook_url ?? null).toBeNull();
    expect((await save('https://hooks.example.com/italian-company-data')).headers.get('location')).toBe(`${page}?done=saved`);
    expect((await production.db('alert_settings').where({ organization_id: orgId }).first('webhook_url')).webhook_url).toBe('https://hooks.example.com/italian-company-data');
  });
});
