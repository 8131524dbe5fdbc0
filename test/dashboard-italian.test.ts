import { describe, expect, it } from 'vitest';
import { deliverDueWebhooks, evaluateThresholds, listDeliveries, setWebhookUrl } from '../core/alerts/index.js';
import { adminOfNewOrg, dashboardForFile, httpSession } from './dashboard-fixtures.js';

// Italian pages say in Italian what the system wrote in English or as codes: a threshold's kind
// in the activity log, a delivery's failure in the delivery log, an oversized form's refusal.

const env = dashboardForFile();

describe('when the page is in Italian', () => {
  it('then the activity log names an added threshold by its Italian label, not its code', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Italian threshold audit test');
    client.jar.set('dash_lang', 'it');
    const page = `/orgs/${orgId}/alerts`;
    await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'percent_used', value: '80' });
    const activity = await (await client.get(`/orgs/${orgId}/activity`)).text();
    // The page escapes the apostrophe.
    expect(activity).toContain('Aggiunta una soglia di avviso: la dotazione usata raggiunge l&#39;80%');
    expect(activity).not.toContain('percent_used');
  });

  it('then the delivery log says in Italian that a webhook had no address to go to', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Italian delivery log test');
    // A delivery queued while there was an address, which was then removed.
    await setWebhookUrl(env.db, orgId, 'http://127.0.0.1:9/hook', { allowPrivateTargets: true });
    await client.post(`/orgs/${orgId}/alerts/thresholds`, { _csrf: await client.csrf(`/orgs/${orgId}/alerts`), kind: 'balance_below', value: '1000000000' });
    await evaluateThresholds(env.db);
    await setWebhookUrl(env.db, orgId, null);
    // Other test files' due deliveries share the table: passes until this one was tried.
    for (let i = 0; i < 20 && !(await listDeliveries(env.db, orgId))[0]?.lastError; i++) await deliverDueWebhooks(env.db, { allowPrivateTargets: true });
    expect((await listDeliveries(env.db, orgId))[0]!.lastError).toBe('no webhook address configured');

    client.jar.set('dash_lang', 'it');
    const alerts = await (await client.get(`/orgs/${orgId}/alerts`)).text();
    expect(alerts).toContain('nessun URL di webhook impostato');
    expect(alerts).not.toContain('no webhook address configured');
  });

  it('then a form too large to read is refused in Italian', async () => {
    const client = httpSession(env.dashboard.url);
    client.jar.set('dash_lang', 'it');
    const res = await client.post('/sign-in', { email: 'x'.repeat(70 * 1024), password: 'x' });
    expect(res.status).toBe(413);
    const body = await res.text();
    expect(body).toContain('Il modulo è troppo grande per essere inviato.');
    expect(body).not.toContain('form too large');
  });
});
