import { describe, expect, it } from 'vitest';
import { setWebhookUrl } from '../core/alerts/index.js';
import { adminOfNewOrg, createMember, dashboardForFile, httpSession } from './dashboard-fixtures.js';

// The alerts page's forms over plain HTTP: what a threshold accepts, and what a refusal shows.

const env = dashboardForFile();

const thresholds = (orgId: string) => env.db('alert_thresholds').where({ organization_id: orgId }).orderBy('value').select('kind', 'value');

/** The threshold form's value field, with its error under it when refused. */
const valueField = (body: string) => /<input id="threshold-value"[^>]*>\s*(?:<p class="field-error" id="threshold-value-error">([^<]*)<\/p>)?/.exec(body);

describe('alert threshold form', () => {
  it('when the same threshold is added twice then the second is refused with a sentence under the value, as typed, and one is kept', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Alert duplicate test');
    const page = `/orgs/${orgId}/alerts`;
    const add = async (value: string) => client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'balance_below', value });
    expect((await add('200000')).headers.get('location')).toBe(`${page}?done=saved`);
    const again = await add('200000');
    expect(again.status).toBe(422);
    const body = await again.text();
    expect(body).toContain('Please check the form: Value: This threshold is already set.');
    expect(valueField(body)![0]).toContain('value="200000"');
    expect(valueField(body)![0]).toContain('aria-invalid="true"');
    expect(valueField(body)![1]).toBe('This threshold is already set.');
    expect(body).toMatch(/<option value="balance_below" selected>/);
    expect(await thresholds(orgId)).toEqual([{ kind: 'balance_below', value: 200_000 }]);
  });

  it('when the value is blank, spaces, hexadecimal, a fraction or negative then it is refused with why, kept as typed, and nothing is saved; the audit row holds the value saved', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Alert value test');
    const page = `/orgs/${orgId}/alerts`;
    for (const value of ['', ' ', '0x10', '1.5', '1e3', '-1']) {
      const res = await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'balance_below', value });
      expect(res.status, JSON.stringify(value)).toBe(422);
      const field = valueField(await res.text())!;
      expect(field[0], JSON.stringify(value)).toContain(`value="${value}"`);
      // Not digits: the separators' reason (1.5 is not read as 15 nor as 1); blank or below 0: the range.
      expect(field[1], JSON.stringify(value)).toBe(['', ' ', '-1'].includes(value)
        ? 'A threshold is a whole percentage from 1 to 100, or a balance of 0 or more credits.'
        : 'a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English');
    }
    expect(await thresholds(orgId)).toEqual([]);
    await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'percent_used', value: ' 80 ' });
    expect(await thresholds(orgId)).toEqual([{ kind: 'percent_used', value: 80 }]);
    expect(await env.db('audit_log').where({ organization_id: orgId, action: 'alerts.threshold_added' }).pluck('details')).toEqual([{ kind: 'percent_used', value: 80 }]);
    // The row says the threshold as a sentence with its value: not "reaches (%)" next to "80%".
    const row = /<tbody>\s*<tr>([\s\S]*?)<\/tr>/.exec((await (await client.get(page)).text()).split('id="alerts-thresholds"')[1] ?? '')?.[1] ?? '';
    expect([...row.matchAll(/<t[dh][^>]*>([^<]*)</g)].map((m) => m[1]).slice(0, 2)).toEqual(['Allowance used reaches', '80%']);
  });

  it('when the value is digits too many for a number (20 nines, 40 ones) then it is refused by its size, not as separators, in English and Italian, and nothing is saved', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Alert huge value test');
    const page = `/orgs/${orgId}/alerts`;
    const add = async (kind: string, value: string) => (await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind, value })).text();
    for (const value of ['99999999999999999999', '1'.repeat(40), '9007199254740992']) {
      const body = await add('balance_below', value);
      expect(valueField(body)![1], value).toBe('at most 9007199254740991');
      expect(body).toContain('Please check the form: Value: at most 9007199254740991');
      expect(valueField(body)![0]).toContain(`value="${value}"`);
      // A percentage that large: its range, as for 150.
      expect(valueField(await add('percent_used', value))![1]).toBe('A threshold is a whole percentage from 1 to 100, or a balance of 0 or more credits.');
    }
    await client.get('/language?lang=it&next=/');
    expect(valueField(await add('balance_below', '1'.repeat(40)))![1]).toBe('al massimo 9007199254740991');
    expect(await thresholds(orgId)).toEqual([]);
    expect((await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'balance_below', value: '9007199254740991' })).status).toBe(302);
    expect(await thresholds(orgId)).toEqual([{ kind: 'balance_below', value: 9007199254740991 }]);
  });

  it('when a link carries words of its own in ?error= then the page shows none of them; a refusal on an Italian page is in Italian, under the field', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Alert spoof test');
    const spoofed = await (await client.get(`/orgs/${orgId}/alerts?error=${encodeURIComponent('Your account is suspended: call +39 000 000')}`)).text();
    expect(spoofed).not.toContain('suspended');
    expect(spoofed).not.toContain('notice-bad');
    await client.get('/language?lang=it&next=/');
    const page = `/orgs/${orgId}/alerts`;
    const refused = await (await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'percent_used', value: '150' })).text();
    expect(valueField(refused)![1]).toContain('Una soglia è una percentuale intera da 1 a 100');
    expect(valueField(refused)![0]).toContain('value="150"');
    expect(refused).toContain('Controlla il modulo: Valore: Una soglia è una percentuale intera da 1 a 100');
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
      const refused = await save(url);
      expect(refused.status, url).toBe(422);
      // The address comes back as typed, the sentence under it.
      const body = await refused.text();
      expect(body, url).toMatch(new RegExp(`<input id="webhook-url"[^>]*value="${url.replace(/[.[\]]/g, '\\$&')}"[^>]*aria-invalid="true"`));
      expect(body, url).toMatch(/<p class="field-error" id="webhook-url-error">[^<]*this service sends webhooks to public addresses only/);
    }
    expect((await production.db('alert_settings').where({ organization_id: orgId }).first('webhook_url'))?.webhook_url ?? null).toBeNull();
    expect((await save('https://hooks.example.com/italian-company-data')).headers.get('location')).toBe(`${page}?done=saved`);
    expect((await production.db('alert_settings').where({ organization_id: orgId }).first('webhook_url')).webhook_url).toBe('https://hooks.example.com/italian-company-data');
  });
});

describe('the webhook address as finance sees it', () => {
  it('when finance opens the alerts page then it sees where alerts go, not the path or credentials that let anyone post there; the admin sees it whole', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Webhook address finance test');
    const url = 'https://hook-user:s3cr3t-pass@hooks.example.com/services/T000/B000/XXXXSECRETTOKEN?sig=abc';
    await setWebhookUrl(env.db, orgId, url);
    const finance = await createMember(env.db, orgId, 'finance');
    const reader = httpSession(env.dashboard.url);
    await reader.signIn(finance.email, finance.password);
    const seen = await (await reader.get(`/orgs/${orgId}/alerts`)).text();
    expect(seen).toContain('https://hooks.example.com/…');
    for (const secret of ['s3cr3t-pass', 'hook-user', 'XXXXSECRETTOKEN', 'sig=abc']) expect(seen).not.toContain(secret);
    expect(await (await client.get(`/orgs/${orgId}/alerts`)).text()).toContain('XXXXSECRETTOKEN');
  });
});
