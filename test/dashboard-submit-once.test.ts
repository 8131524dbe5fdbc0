import { describe, expect, it } from 'vitest';
import { createApiKey, hashApiKey } from '../core/auth/index.js';
import { createOrganization } from '../core/billing/index.js';
import { hashToken } from '../core/dashboard-auth/index.js';
import { SHOWN_KEPT_MS } from '../dashboard/session-flash.js';
import { adminOfNewOrg, dashboardForFile, httpSession, signedInOperator, uniqueEmail } from './dashboard-fixtures.js';

// A form that makes something, sent twice (a double-click: the second POST leaves before the
// first one's redirect arrives), makes it once: each form carries a one-time submission token.

const env = dashboardForFile();

type Client = ReturnType<typeof httpSession>;

/** The page's CSRF token and the submission token of its first form that has one. */
async function formTokens(client: Client, path: string, action?: string): Promise<{ _csrf: string; _submission: string }> {
  let html = await (await client.get(path)).text();
  if (action) html = html.slice(html.indexOf(`action="${action}"`));
  const _csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  const _submission = /name="_submission" value="([^"]+)"/.exec(html)?.[1];
  if (!_csrf || !_submission) throw new Error(`no form tokens on ${path}`);
  return { _csrf, _submission };
}

/** Moves the showing of the flash of `path` back past the window a repeat may show it again in. */
async function shownLongAgo(client: Client, path: string): Promise<void> {
  const where = { id_hash: hashToken(client.jar.get('dash_session')!) };
  const { flashes } = await env.db('sessions').where(where).first('flashes');
  flashes[path].shown -= SHOWN_KEPT_MS + 1_000;
  await env.db('sessions').where(where).update({ flashes: JSON.stringify(flashes) });
}

const count = async (table: string, where: Record<string, unknown>) => Number((await env.db(table).where(where).count<{ n: string }[]>({ n: '*' }))[0]!.n);
const newKeyIn = (html: string) => /<code id="new-key"[^>]*>(sk_live_[0-9A-Za-z]{32})<\/code>/.exec(html)?.[1];
const linkIn = (html: string) => /<code id="invite-link"[^>]*>[^<]*\/invitations\/([A-Za-z0-9_-]{43})<\/code>/.exec(html)?.[1];

describe('when an admin sends the "Create key" form twice at once (a double-click)', () => {
  it('then one key is made, with one activity row, and the page both answers lead to shows that key', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key double submit test');
    const page = `/orgs/${orgId}/keys`;
    const form = { ...(await formTokens(client, page)), name: 'ERP sync' };
    const answers = await Promise.all([client.post(page, form), client.post(page, form)]);
    for (const res of answers) {
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(page);
    }
    expect(await count('api_keys', { organization_id: orgId })).toBe(1);
    expect(await count('audit_log', { organization_id: orgId, action: 'key.created' })).toBe(1);
    // The browser follows the last answer: the page shows the one key made, not a list without it.
    const key = newKeyIn(await (await client.get(page)).text())!;
    expect(hashApiKey(key)).toBe((await env.db('api_keys').where({ organization_id: orgId }).first('hash')).hash);
  });

  it('then sent again seconds after its key was shown, it makes nothing and shows that key again to this session (the browser may have dropped the first page for it); later, the page says the form had already been sent', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key resubmit test');
    const page = `/orgs/${orgId}/keys`;
    const form = { ...(await formTokens(client, page)), name: 'ERP sync' };
    expect((await client.post(page, form)).status).toBe(303);
    const key = newKeyIn(await (await client.get(page)).text())!;
    const soon = await client.post(page, form);
    expect([soon.status, soon.headers.get('location')]).toEqual([303, page]);
    expect(newKeyIn(await (await client.get(page)).text())).toBe(key);
    // Shown once for that repeat: a reload shows it no more.
    expect(newKeyIn(await (await client.get(page)).text())).toBeUndefined();

    await shownLongAgo(client, page);
    const later = await client.post(page, form);
    expect([later.status, later.headers.get('location')]).toEqual([303, `${page}?done=repeated`]);
    const html = await (await client.get(later.headers.get('location')!)).text();
    expect(html).toContain('That form had already been sent: nothing new was made. What it made the first time is listed below.');
    expect(html).not.toContain(key);
    expect(await count('api_keys', { organization_id: orgId })).toBe(1);
    // The sealed key itself is gone from the session once past the window.
    const { flashes } = await env.db('sessions').where({ id_hash: hashToken(client.jar.get('dash_session')!) }).first('flashes');
    expect(Object.keys(flashes ?? {})).toEqual([]);
  });

  it('then the same form drawn again (a new token) makes a second key, and a form without a token (a page drawn before tokens) still makes one', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key fresh token test');
    const page = `/orgs/${orgId}/keys`;
    expect((await client.post(page, { ...(await formTokens(client, page)), name: 'one' })).status).toBe(303);
    expect((await client.post(page, { ...(await formTokens(client, page)), name: 'two' })).status).toBe(303);
    expect((await client.post(page, { _csrf: (await formTokens(client, page))._csrf, name: 'three' })).status).toBe(303);
    expect(await count('api_keys', { organization_id: orgId })).toBe(3);
  });

  it('then a token not of the shape the page draws is refused (400) and makes nothing', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key odd token test');
    const page = `/orgs/${orgId}/keys`;
    const { _csrf } = await formTokens(client, page);
    const res = await client.post(page, { _csrf, _submission: 'x'.repeat(500), name: 'ERP' });
    expect(res.status).toBe(400);
    expect(await count('api_keys', { organization_id: orgId })).toBe(0);
  });

  it('then the session keeps only its newest used tokens, however many forms it sends', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key token bound test');
    const page = `/orgs/${orgId}/keys`;
    const sent: string[] = [];
    for (let i = 0; i < 40; i++) {
      const form = await formTokens(client, page);
      sent.push(form._submission);
      expect((await client.post(page, { ...form, name: `key ${i}` })).status).toBe(303);
    }
    const { submissions } = await env.db('sessions').where({ id_hash: hashToken(client.jar.get('dash_session')!) }).first('submissions');
    expect(submissions).toEqual(sent.slice(-32));
  });

  it('then without the CSRF token it is still refused (403), token or not', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key double submit CSRF test');
    const page = `/orgs/${orgId}/keys`;
    const { _submission } = await formTokens(client, page);
    expect((await client.post(page, { _submission, name: 'ERP' })).status).toBe(403);
    expect(await count('api_keys', { organization_id: orgId })).toBe(0);
  });
});

describe('when an admin sends a rotation form twice at once', () => {
  it('then one rotation is made and both answers lead to the page showing its new key, not to an "already rotated" refusal', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation double submit test');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'billing sync' });
    const page = `/orgs/${orgId}/keys`;
    const action = `${page}/${old.record.id}/rotate`;
    const form = { ...(await formTokens(client, page, action)), graceSeconds: '3600' };
    const answers = await Promise.all([client.post(action, form), client.post(action, form)]);
    expect(answers.map((r) => [r.status, r.headers.get('location')])).toEqual([[303, page], [303, page]]);
    expect(await count('api_keys', { rotated_from: old.record.id })).toBe(1);
    expect(await count('audit_log', { organization_id: orgId, action: 'key.rotated' })).toBe(1);
    const html = await (await client.get(page)).text();
    expect(html).toContain(`Key rotated. The old key ${old.record.prefix}…`);
    expect(newKeyIn(html)).toBeDefined();
  });
});

describe('when an invitation form is sent twice at once', () => {
  it("then the admin's form makes one invitation, with one activity row, and the page shows its link", async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Invitation double submit test');
    const page = `/orgs/${orgId}/members`;
    const form = { ...(await formTokens(client, page)), email: uniqueEmail('double'), role: 'finance' };
    const answers = await Promise.all([client.post(`${page}/invite`, form), client.post(`${page}/invite`, form)]);
    expect(answers.map((r) => [r.status, r.headers.get('location')])).toEqual([[303, page], [303, page]]);
    expect(await count('invitations', { organization_id: orgId })).toBe(1);
    expect(await count('audit_log', { organization_id: orgId, action: 'member.invited' })).toBe(1);
    const link = linkIn(await (await client.get(page)).text())!;
    expect(hashToken(link)).toBe((await env.db('invitations').where({ organization_id: orgId }).first('token_hash')).token_hash);
  });

  it("then the operator's form makes one invitation too", async () => {
    const { id: orgId } = await createOrganization(env.db, { name: 'Operator invitation double submit test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${orgId}`;
    const form = { ...(await formTokens(client, page, `${page}/invite`)), email: uniqueEmail('double-admin'), role: 'admin' };
    const answers = await Promise.all([client.post(`${page}/invite`, form), client.post(`${page}/invite`, form)]);
    expect(answers.map((r) => [r.status, r.headers.get('location')])).toEqual([[303, page], [303, page]]);
    expect(await count('invitations', { organization_id: orgId })).toBe(1);
    expect(await count('audit_log', { organization_id: orgId, action: 'member.invited' })).toBe(1);
    expect(linkIn(await (await client.get(page)).text())).toBeDefined();
  });
});

describe('when an operator sends the "create organization" form twice at once', () => {
  it('then one organization is made, with one activity row, and both answers lead to its page', async () => {
    const client = await signedInOperator(env);
    const name = `Organization double submit test ${uniqueEmail('org')}`;
    const form = { ...(await formTokens(client, '/operator', '/operator/organizations')), name, planId: 'standard' };
    const answers = await Promise.all([client.post('/operator/organizations', form), client.post('/operator/organizations', form)]);
    expect(await count('organizations', { name })).toBe(1);
    const { id } = await env.db('organizations').where({ name }).first('id');
    expect(answers.map((r) => [r.status, r.headers.get('location')])).toEqual([[302, `/operator/organizations/${id}?done=created`], [302, `/operator/organizations/${id}?done=created`]]);
    expect(await count('audit_log', { organization_id: id, action: 'organization.created' })).toBe(1);
    // Sent again later, it still makes nothing and still leads to that organization.
    expect((await client.post('/operator/organizations', form)).headers.get('location')).toBe(`/operator/organizations/${id}?done=created`);
    expect(await count('organizations', { name })).toBe(1);
  });
});

describe('when an operator sends the credits form twice at once', () => {
  it('then the credits are booked once, with one ledger row and one activity row, and the other answer says so', async () => {
    const { id: orgId } = await createOrganization(env.db, { name: 'Credits double submit test', planId: 'standard' });
    const client = await signedInOperator(env);
    const page = `/operator/organizations/${orgId}`;
    const before = Number((await env.db('allowances').where({ organization_id: orgId }).first('credits_balance')).credits_balance);
    const form = { ...(await formTokens(client, page, `${page}/credits`)), kind: 'top_up', credits: '5000', reason: 'invoice 118' };
    const answers = await Promise.all([client.post(`${page}/credits`, form), client.post(`${page}/credits`, form)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(await count('usage_ledger', { organization_id: orgId, entry_type: 'top_up' })).toBe(1);
    expect(await count('audit_log', { organization_id: orgId, action: 'credits.top_up' })).toBe(1);
    const after = Number((await env.db('allowances').where({ organization_id: orgId }).first('credits_balance')).credits_balance);
    expect(after).toBe(before + 5000);
    const bodies = await Promise.all(answers.map((r) => r.text()));
    const balance = after.toLocaleString('en');
    expect(bodies.filter((b) => b.includes(`Credits changed: balance now ${balance}.`))).toHaveLength(1);
    expect(bodies.filter((b) => b.includes(`That form had already been sent: its credits were booked once, not twice. Balance: ${balance}.`))).toHaveLength(1);
  });
});

describe('when an admin sends the "add threshold" form twice at once', () => {
  it('then one threshold is made, with one activity row, and both answers are the first one\'s, not an "already set" refusal', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Threshold double submit test');
    const page = `/orgs/${orgId}/alerts`;
    const form = { ...(await formTokens(client, page, `${page}/thresholds`)), kind: 'percent_used', value: '80' };
    const answers = await Promise.all([client.post(`${page}/thresholds`, form), client.post(`${page}/thresholds`, form)]);
    expect(answers.map((r) => [r.status, r.headers.get('location')])).toEqual([[302, `${page}?done=saved`], [302, `${page}?done=saved`]]);
    expect(await count('alert_thresholds', { organization_id: orgId })).toBe(1);
    expect(await count('audit_log', { organization_id: orgId, action: 'alerts.threshold_added' })).toBe(1);
  });
});
