import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addThreshold } from '../core/alerts/index.js';
import { createApiKey } from '../core/auth/index.js';
import { createOrganization } from '../core/billing/index.js';
import { recordAudit } from '../core/dashboard-auth/index.js';
import { adminOfNewOrg, createMember, dashboardForFile, httpSession, refuseAuditRowsOf, signedInOperator, uniqueEmail } from './dashboard-fixtures.js';

// Every change made in the dashboard leaves its audit row, in the same transaction: when the row
// cannot be written the change is not saved either (the page answers 500 and nothing moved).

const env = dashboardForFile();


const auditOf = (orgId: string) =>
  env.db('audit_log').where({ organization_id: orgId }).orderBy('id').select<{ actor: string; action: string; details: Record<string, unknown> | null }[]>('actor', 'action', 'details');
const keysOf = (orgId: string) => env.db('api_keys').where({ organization_id: orgId }).orderBy('created_at').select<{ id: string; name: string; revoked_at: Date | null; expires_at: Date | null }[]>('id', 'name', 'revoked_at', 'expires_at');

describe('when an admin creates, rotates and revokes keys', () => {
  it('then each change leaves one audit row naming the admin and the key', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Audit keys test');
    const page = `/orgs/${orgId}/keys`;
    expect((await client.post(page, { _csrf: await client.csrf(page), name: 'ERP' })).status).toBe(303);
    const [created] = await keysOf(orgId);
    expect((await client.post(`${page}/${created!.id}/rotate`, { _csrf: await client.csrf(page), graceSeconds: '0' })).status).toBe(303);
    const rotated = (await keysOf(orgId)).find((k) => k.id !== created!.id)!;
    expect((await client.post(`${page}/${rotated.id}/revoke`, { _csrf: await client.csrf(page) })).status).toBe(302);

    expect(await auditOf(orgId)).toEqual([
      { actor: adminId, action: 'key.created', details: { keyId: created!.id, name: 'ERP', mode: 'live' } },
      { actor: adminId, action: 'key.rotated', details: { from: created!.id, to: rotated.id, graceSeconds: 0 } },
      { actor: adminId, action: 'key.revoked', details: { keyId: rotated.id } },
    ]);
  });
});

describe('when an admin invites someone who accepts', () => {
  it('then the invitation and the joining are both audited', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Audit invitation test');
    const page = `/orgs/${orgId}/members`;
    const email = uniqueEmail('joining');
    const invited = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email, role: 'finance' });
    expect(invited.status).toBe(303);
    const link = /\/invitations\/[A-Za-z0-9_-]{43}/.exec(await (await client.get(page)).text())![0];
    const newcomer = httpSession(env.dashboard.url);
    const accepted = await newcomer.post(link, { _csrf: await newcomer.csrf(link), password: 'a long enough password', confirmPassword: 'a long enough password', name: 'New Colleague' });
    expect(accepted.status).toBe(302);
    const joined = await env.db('users').where({ email }).first<{ id: string }>('id');
    expect(await auditOf(orgId)).toEqual([
      { actor: adminId, action: 'member.invited', details: { email, role: 'finance' } },
      { actor: joined!.id, action: 'member.joined', details: { email, role: 'finance' } },
    ]);
  });
});

describe('when an admin accepts an invitation to a lower role', () => {
  it('then they stay admin and the log says so, not that they joined as finance', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Audit kept role test');
    const email = uniqueEmail('later-admin');
    const page = `/orgs/${orgId}/members`;
    expect((await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: email.toUpperCase(), role: 'finance' })).status).toBe(303);
    const link = /\/invitations\/[A-Za-z0-9_-]{43}/.exec(await (await client.get(page)).text())![0];
    // The address became an admin after the link was made, other than by an invitation (which
    // would have closed this one; a member's address is not invited to a role it holds).
    const admin = await createMember(env.db, orgId, 'admin');
    await env.db('users').where({ id: admin.userId }).update({ email });
    const person = httpSession(env.dashboard.url);
    await person.signIn(email, admin.password);
    expect((await person.post(link, { _csrf: await person.csrf(link) })).status).toBe(302);

    expect(await env.db('memberships').where({ organization_id: orgId, user_id: admin.userId }).pluck('role')).toEqual(['admin']);
    expect((await auditOf(orgId)).at(-1)).toEqual({ actor: admin.userId, action: 'member.joined', details: { email, role: 'admin', invitedAs: 'finance' } });
    const activity = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(activity).toContain(`${email} accepted an invitation as finance and stays admin`);
    expect(activity).not.toContain('accepted the invitation as finance');
  });
});

describe('when the audit row cannot be written', () => {
  it('then a key is neither created, rotated nor revoked', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Audit refused keys test');
    const existing = await createApiKey(env.db, { organizationId: orgId, name: 'in use' });
    const page = `/orgs/${orgId}/keys`;
    const token = await client.csrf(page);
    const restore = await refuseAuditRowsOf(env.db, orgId);
    try {
      expect((await client.post(page, { _csrf: token, name: 'never saved' })).status).toBe(500);
      expect((await client.post(`${page}/${existing.record.id}/rotate`, { _csrf: token, graceSeconds: '0' })).status).toBe(500);
      expect((await client.post(`${page}/${existing.record.id}/revoke`, { _csrf: token })).status).toBe(500);
    } finally {
      await restore();
    }
    expect(await keysOf(orgId)).toEqual([{ id: existing.record.id, name: 'in use', revoked_at: null, expires_at: null }]);
    expect(await auditOf(orgId)).toEqual([]);
  });

  it('then an invitation is not created and a member is not removed', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Audit refused members test');
    const finance = await createMember(env.db, orgId, 'finance');
    const page = `/orgs/${orgId}/members`;
    const token = await client.csrf(page);
    const restore = await refuseAuditRowsOf(env.db, orgId);
    try {
      expect((await client.post(`${page}/invite`, { _csrf: token, email: 'new.colleague@example.test', role: 'finance' })).status).toBe(500);
      expect((await client.post(`${page}/${finance.userId}/remove`, { _csrf: token })).status).toBe(500);
    } finally {
      await restore();
    }
    expect(await env.db('invitations').where({ organization_id: orgId }).first()).toBeUndefined();
    expect(await env.db('memberships').where({ organization_id: orgId, user_id: finance.userId }).first()).toBeDefined();
  });

  it("then an operator's credit grant is not booked", async () => {
    const org = await createOrganization(env.db, { name: 'Audit refused credits test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const ledgerBefore = await env.db('usage_ledger').where({ organization_id: org.id }).count<{ n: string }[]>({ n: '*' });
    const balanceBefore = await env.db('allowances').where({ organization_id: org.id }).first('credits_balance');
    const token = await client.csrf(page);
    const restore = await refuseAuditRowsOf(env.db, org.id);
    try {
      expect((await client.post(`${page}/credits`, { _csrf: token, kind: 'top_up', credits: '5000', reason: 'never booked' })).status).toBe(500);
    } finally {
      await restore();
    }
    expect(await env.db('usage_ledger').where({ organization_id: org.id }).count<{ n: string }[]>({ n: '*' })).toEqual(ledgerBefore);
    expect(await env.db('allowances').where({ organization_id: org.id }).first('credits_balance')).toEqual(balanceBefore);
  });
});

describe('when an operator saves a settings form again unchanged', () => {
  it('then only the save that changed something is in the activity log', async () => {
    const org = await createOrganization(env.db, { name: 'Audit unchanged settings test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const post = async (form: string, fields: Record<string, string>) => (await client.post(`${page}/${form}`, { ...(await client.hiddenFields(page, `${page}/${form}`)), ...fields })).status;
    // The plan it already has: nothing changes, nothing is logged.
    expect(await post('plan', { planId: 'standard' })).toBe(200);
    // A double-click on Save: the second of each changes nothing.
    for (let i = 0; i < 2; i++) {
      expect(await post('limits', { perSecond: '5', burst: '10', perMinute: '100' })).toBe(200);
      expect(await post('period', { creditsPerPeriod: '500', callsCap: '40' })).toBe(200);
    }
    expect((await auditOf(org.id)).map((a) => a.action)).toEqual(['organization.limits_set', 'organization.period_set']);
    // A real change is logged again.
    expect(await post('limits', { perSecond: '6', burst: '10', perMinute: '100' })).toBe(200);
    expect((await auditOf(org.id)).map((a) => a.action)).toEqual(['organization.limits_set', 'organization.period_set', 'organization.limits_set']);
  });

  it('then a product override saved twice is logged once, and a new measure again', async () => {
    const org = await createOrganization(env.db, { name: 'Audit unchanged product test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const save = async (quantity: string) =>
      (await client.post(`${page}/products`, { ...(await client.hiddenFields(page, `${page}/products`, { product: 'company-report' })), enabled: '1', quantity, unit: 'calls' })).status;
    // Two at once, as a double-click sends them: the second sees the first's override.
    expect(await Promise.all([save('2'), save('2')])).toEqual([200, 200]);
    expect(await save('3')).toBe(200);
    expect((await auditOf(org.id)).map((a) => [a.action, a.details?.quantity])).toEqual([['organization.product_set', 2], ['organization.product_set', 3]]);
  });
});

describe('when an admin saves the webhook address again unchanged', () => {
  it('then only the saves that changed it are in the activity log', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Audit unchanged webhook test');
    const page = `/orgs/${orgId}/alerts`;
    const save = async (webhookUrl: string) => (await client.post(`${page}/webhook`, { _csrf: await client.csrf(page), webhookUrl })).status;
    expect(await Promise.all([save('https://example.com/hook'), save('https://example.com/hook')])).toEqual([302, 302]);
    expect(await save(' https://example.com/hook ')).toBe(302); // the same address, as stored
    expect(await save('')).toBe(302);
    expect(await save('')).toBe(302);
    expect((await auditOf(orgId)).map((a) => a.action)).toEqual(['alerts.webhook_set', 'alerts.webhook_set']);
  });
});

describe('when an operator resets a product to the plan', () => {
  it('then it is audited only if there was an override to reset', async () => {
    const org = await createOrganization(env.db, { name: 'Audit product reset test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${org.id}`;
    const post = async (form: Record<string, string>) => (await client.post(`${page}/products`, { ...(await client.hiddenFields(page, `${page}/products`, { product: 'company-report' })), ...form })).status;
    expect(await post({ reset: '1' })).toBe(200);
    expect(await auditOf(org.id)).toEqual([]);
    expect(await post({ enabled: '1', quantity: '2', unit: 'calls' })).toBe(200);
    expect(await post({ reset: '1' })).toBe(200);
    expect((await auditOf(org.id)).map((a) => a.action)).toEqual(['organization.product_set', 'organization.product_reset']);
    // The activity log says what the override did, not only that it changed.
    expect(await post({ quantity: '0', unit: 'credits' })).toBe(200);
    const activity = await (await client.get(`/orgs/${org.id}/activity`)).text();
    expect(activity).toContain('Set product company-report to 2 calls');
    expect(activity).toContain('Turned off product company-report');
  });
});

describe('when an admin removes an alert threshold', () => {
  it('then the removal is audited like the addition', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Audit threshold test');
    const threshold = await addThreshold(env.db, orgId, { kind: 'percent_used', value: 80 });
    const page = `/orgs/${orgId}/alerts`;
    expect((await client.post(`${page}/thresholds/${threshold.id}/delete`, { _csrf: await client.csrf(page) })).status).toBe(302);
    expect(await auditOf(orgId)).toEqual([{ actor: adminId, action: 'alerts.threshold_removed', details: { thresholdId: threshold.id } }]);
  });
});

describe('when an admin opens the activity page', () => {
  it('then each change is described in words, newest first, 50 a page, in English or Italian', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Activity page test');
    const page = `/orgs/${orgId}/keys`;
    expect((await client.post(page, { _csrf: await client.csrf(page), name: 'ERP' })).status).toBe(303);
    const [key] = await keysOf(orgId);
    // An operator's grant, and enough older rows for a second page.
    for (let i = 0; i < 50; i++) await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'alerts.webhook_set' });
    await recordAudit(env.db, { organizationId: orgId, actor: 'usr_operator_test', action: 'credits.top_up', details: { credits: 5000, reason: 'invoice 118' } });

    const first = await client.get(`/orgs/${orgId}/activity`);
    expect(first.status).toBe(200);
    const html = await first.text();
    expect(html).toContain('Page 1 of 2 · 52 rows');
    // Newest first: the top-up, then the webhook changes; the key's creation is on page 2.
    expect(html.indexOf('Topped up 5,000 credits: invoice 118')).toBeGreaterThan(-1);
    expect(html.indexOf('Topped up 5,000 credits: invoice 118')).toBeLessThan(html.indexOf('Changed the webhook URL'));
    expect(html).not.toContain('Created API key');
    const second = await (await client.get(`/orgs/${orgId}/activity?page=2`)).text();
    // The key as the keys page shows it, by name and prefix, not by its id.
    const { prefix } = await env.db('api_keys').where({ id: key!.id }).first('prefix');
    expect(second).toContain(`Created API key ERP (${prefix}…)`);
    expect(second).not.toContain(key!.id);
    expect(second).toContain('Page 2 of 2 · 52 rows');

    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}/activity?page=2`)).text();
    expect(italian).toContain(`Creata la chiave API ERP (${prefix}…)`);
    expect(italian).toContain('Attività');
  });

  it('then one kind of change can be shown alone, its pages keeping the kind, as a script making keys all day buries the rest', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Activity kinds test');
    await recordAudit(env.db, { organizationId: orgId, actor: 'usr_operator_test', action: 'allowance.cap_set', details: { callsCap: 9, thisPeriodOnly: false, reason: 'deal' } });
    await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'member.invited', details: { email: 'someone@example.com', role: 'finance' } });
    for (let i = 0; i < 51; i++) await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'key.revoked', details: { keyId: `key_gone${i}` } });

    const all = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(all).toContain('Page 1 of 2 · 53 rows');
    expect(all).not.toContain('someone@example.com');
    expect(all).toMatch(/<a class="tab" href="\/orgs\/org_[^"]+\/activity" aria-current="page">All<\/a>/);

    const members = await (await client.get(`/orgs/${orgId}/activity?kind=members`)).text();
    expect(members).toContain('someone@example.com');
    expect(members).toContain('Page 1 of 1 · 1 row');
    expect(members).toMatch(/href="[^"]+\?kind=members" aria-current="page">Members</);
    const credits = await (await client.get(`/orgs/${orgId}/activity?kind=credits`)).text();
    expect(credits).toContain('Page 1 of 1 · 1 row');
    expect(credits).not.toContain('someone@example.com');

    // The pager keeps the kind; an unknown kind shows everything.
    const keys = await (await client.get(`/orgs/${orgId}/activity?kind=keys`)).text();
    expect(keys).toContain('Page 1 of 2 · 51 rows');
    expect(keys).toMatch(new RegExp(`rel="next" href="/orgs/${orgId}/activity\\?kind=keys&amp;older=\\d+"`));
    expect(await (await client.get(`/orgs/${orgId}/activity?kind=nonsense`)).text()).toContain('Page 1 of 2 · 53 rows');

    client.jar.set('dash_lang', 'it');
    expect(await (await client.get(`/orgs/${orgId}/activity?kind=members`)).text()).toMatch(/aria-current="page">Membri</);
  });

  it('then a change made while an admin goes from the first page to the next pushes none of the first page onto it, the kind kept', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Activity rows meanwhile test');
    const tag = randomUUID().slice(0, 8);
    await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'member.invited', details: { email: `left-out-${tag}@example.com`, role: 'finance' } });
    for (let i = 1; i <= 60; i++) await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'key.revoked', details: { keyId: `key_${tag}${String(i).padStart(3, '0')}` } });
    const newestFirst = Array.from({ length: 60 }, (_, i) => `key_${tag}${String(60 - i).padStart(3, '0')}`);
    const listed = (body: string) => [...(/id="activity-table"[\s\S]*?<\/tbody>/.exec(body)?.[0] ?? '').matchAll(new RegExp(`key_${tag}\\d+`, 'g'))].map((m) => m[0]);
    const linkOf = (body: string, rel: string) => new RegExp(`<a [^>]*rel="${rel}" href="([^"]*)"`).exec(body)?.[1]?.replaceAll('&amp;', '&') ?? null;
    const open = async (path: string) => {
      const res = await client.get(path);
      expect(res.status, path).toBe(200);
      return res.text();
    };

    const first = await open(`/orgs/${orgId}/activity?kind=keys`);
    expect(listed(first)).toEqual(newestFirst.slice(0, 50));
    expect(first).toContain('Page 1 of 2 · 60 rows');
    const newest = `key_${tag}999`;
    await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'key.revoked', details: { keyId: newest } });

    const second = await open(linkOf(first, 'next')!);
    expect(listed(second)).toEqual(newestFirst.slice(50));
    expect(second).toContain('Page 2 of 2 · 61 rows');
    expect(second).not.toContain(`left-out-${tag}`);
    expect(linkOf(second, 'next')).toBeNull();
    expect(linkOf(second, 'prev')).toMatch(new RegExp(`^/orgs/${orgId}/activity\\?kind=keys&newer=\\S+$`));
    // Previous, from the page's first row: the 50 above it, then the first page, the new row at its top.
    const above = await open(linkOf(second, 'prev')!);
    expect(listed(above)).toEqual(newestFirst.slice(0, 50));
    expect(above).toContain('Page 2 of 3 · 61 rows');
    const back = await open(linkOf(above, 'prev')!);
    expect(listed(back)).toEqual([newest, ...newestFirst.slice(0, 49)]);
    // A cursor that is not one: the first page; a page asked for by number is still read by number.
    for (const bad of ['older=junk', 'older=1%27%20OR%201=1', 'newer=1.2', 'older=']) {
      const body = await open(`/orgs/${orgId}/activity?kind=keys&${bad}`);
      expect(listed(body), bad).toEqual([newest, ...newestFirst.slice(0, 49)]);
      expect(body, bad).toContain('Page 1 of 2 · 61 rows');
    }
    expect(listed(await open(`/orgs/${orgId}/activity?kind=keys&page=2`))).toEqual(newestFirst.slice(49));
  });

  it('then finance, who reads the money but changes nothing, is refused and has no link to it', async () => {
    const org = await createOrganization(env.db, { name: 'Activity finance test', planId: 'standard' });
    const finance = await createMember(env.db, org.id, 'finance');
    const client = httpSession(env.dashboard.url);
    await client.signIn(finance.email, finance.password);
    expect((await client.get(`/orgs/${org.id}/activity`)).status).toBe(403);
    expect(await (await client.get(`/orgs/${org.id}`)).text()).not.toContain(`/orgs/${org.id}/activity`);
  });
});

describe('when the activity log shows a cap or limit change whose value is "none" or "the plan\'s"', () => {
  it('then it says so in words, and says when a cap holds for this period only, in English and Italian', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Audit cap wording test');
    await recordAudit(env.db, { organizationId: orgId, actor: 'cli:ops', action: 'allowance.cap_set', details: { callsCap: 10, thisPeriodOnly: true, reason: 'trial month' } });
    await recordAudit(env.db, { organizationId: orgId, actor: 'cli:ops', action: 'allowance.cap_set', details: { callsCap: null, thisPeriodOnly: false, reason: 'contract signed' } });
    await recordAudit(env.db, { organizationId: orgId, actor: 'cli:ops', action: 'organization.limits_set', details: { perSecond: 20, burst: null, perMinute: null } });

    const english = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(english).toContain('Set the calls cap to 10 for this period only: trial month');
    expect(english).toContain('Removed the calls cap: contract signed');
    expect(english).toContain('Set rate limits: per second 20, burst the plan&#39;s, per minute the plan&#39;s');
    expect(english).not.toContain('—');

    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(italian).toContain('Impostato il tetto di chiamate a 10 solo per questo periodo: trial month');
    expect(italian).toContain('Rimosso il tetto di chiamate: contract signed');
    expect(italian).toContain('Impostati i limiti: al secondo 20, burst come da piano, al minuto come da piano');
  });
});
