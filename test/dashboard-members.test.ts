import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { hashToken, recordAudit } from '../core/dashboard-auth/index.js';
import { adminOfNewOrg, createMember, dashboardForFile, httpSession, refuseAuditRowsOf, signedInOperator, startTestDashboard, uniqueEmail } from './dashboard-fixtures.js';

// Members and invitations over real HTTP: an invitation stops working once its address joins,
// is removed or the invitation is cancelled; links name the dashboard, not the request's
// Origin; an organization always keeps an admin.

const env = dashboardForFile();

type Client = ReturnType<typeof httpSession>;

const membersPage = (orgId: string) => `/orgs/${orgId}/members`;

/** The members page an invitation's 303 leads to, which shows the link once. */
async function followed(client: Client, res: Response, orgId: string): Promise<string> {
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(membersPage(orgId));
  return (await client.get(membersPage(orgId))).text();
}

const linkIn = (html: string) => /<code id="invite-link"[^>]*>([^<]+)<\/code>/.exec(html)?.[1];

/** Invites `email` and returns the link's path, as the admin would copy it. */
async function invite(client: Client, orgId: string, email: string, role: 'admin' | 'finance' = 'finance'): Promise<string> {
  const page = membersPage(orgId);
  const res = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email, role });
  return /\/invitations\/[A-Za-z0-9_-]{43}/.exec(await followed(client, res, orgId))![0];
}

const invitationIdOf = (link: string) => hashToken(link.slice('/invitations/'.length));

/** The open-invitations table of the members page (empty when it has none). */
async function openInvitationsTable(client: Client, orgId: string): Promise<string> {
  const html = await (await client.get(membersPage(orgId))).text();
  const start = html.indexOf('id="open-invitations"');
  return start < 0 ? '' : html.slice(start, html.indexOf('</section>', start));
}

const membershipOf = (orgId: string, userId: string) => env.db('memberships').where({ organization_id: orgId, user_id: userId }).first<{ role: string } | undefined>('role');
const auditOf = (orgId: string) =>
  env.db('audit_log').where({ organization_id: orgId }).orderBy('id').select<{ actor: string; action: string; details: Record<string, unknown> | null }[]>('actor', 'action', 'details');

describe('when the invited address has joined', () => {
  it('then its other invitations to the organization are closed and no longer listed', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members join closes test');
    const email = uniqueEmail('joining');
    const first = await invite(client, orgId, email);
    const second = await invite(client, orgId, email);
    const other = uniqueEmail('other');
    await invite(client, orgId, other);

    const newcomer = httpSession(env.dashboard.url);
    expect((await newcomer.post(first, { _csrf: await newcomer.csrf(first), password: 'a long enough password', confirmPassword: 'a long enough password' })).status).toBe(302);

    expect((await newcomer.get(second)).status).toBe(404);
    const table = await openInvitationsTable(client, orgId);
    expect(table).not.toContain(email);
    // Another address's invitation is untouched.
    expect(table).toContain(other);
  });

  it('then the same link again a moment later (a double-click, a reload) says it was accepted and asks to sign in, or sends the signed-in member on', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members accepted link test');
    const email = uniqueEmail('twice');
    const link = await invite(client, orgId, email);
    // A double-click: two POSTs with the same cookies and token. One joins; the other, whichever
    // comes second, is told the person joined, not that the link failed.
    const form = httpSession(env.dashboard.url);
    const csrf = await form.csrf(link);
    const answers = await Promise.all([1, 2].map(() => form.post(link, { _csrf: csrf, password: 'a long enough password', confirmPassword: 'a long enough password' })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 302]);
    const body = await answers.find((a) => a.status === 200)!.text();
    expect(body).toContain('This invitation to Members accepted link test has been accepted. Sign in to continue.');
    expect(body).toContain(`href="/sign-in?next=${encodeURIComponent(`/orgs/${orgId}`)}"`);
    expect(body).not.toContain('not valid any more');
    // Signed in (the first answer's cookie), the link leads to the organization.
    const signedIn = await form.get(link);
    expect(signedIn.status).toBe(302);
    expect(signedIn.headers.get('location')).toBe(`/orgs/${orgId}`);
    expect(await env.db('memberships').where({ organization_id: orgId }).count<{ n: string }[]>({ n: '*' }).then((r) => Number(r[0]!.n))).toBe(2);
  });

  it('then a removed member cannot rejoin with an invitation made before the removal', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members removal closes test');
    const email = uniqueEmail('removed');
    const password = 'a long enough password';
    const first = await invite(client, orgId, email);
    const newcomer = httpSession(env.dashboard.url);
    expect((await newcomer.post(first, { _csrf: await newcomer.csrf(first), password, confirmPassword: password })).status).toBe(302);
    const user = await env.db('users').where({ email }).first<{ id: string }>('id');
    // Invited again while a member (to change role, say), then removed.
    const again = await invite(client, orgId, email, 'admin');
    const page = membersPage(orgId);
    expect((await client.post(`${page}/${user!.id}/remove`, { _csrf: await client.csrf(page) })).status).toBe(302);
    expect(await openInvitationsTable(client, orgId)).not.toContain(email);

    const person = httpSession(env.dashboard.url);
    expect((await person.signIn(email, password)).status).toBe(302);
    const rejoin = await person.post(again, { _csrf: await person.csrf('/orgs') });
    expect(rejoin.status).toBe(404);
    expect(await membershipOf(orgId, user!.id)).toBeUndefined();
  });
});

describe('when a member accepts an invitation with another role', () => {
  it('then a finance member invited as admin becomes one, and an admin is not invited as finance (the organization keeps its admin)', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Members role change test');
    const finance = await createMember(env.db, orgId, 'finance');
    const raise = await invite(client, orgId, finance.email, 'admin');
    const person = httpSession(env.dashboard.url);
    await person.signIn(finance.email, finance.password);
    expect((await person.post(raise, { _csrf: await person.csrf('/orgs') })).status).toBe(302);
    expect((await membershipOf(orgId, finance.userId))!.role).toBe('admin');

    // An admin is not invited as finance at all (see "already a member" below).
    const admin = await env.db('users').where({ id: adminId }).first<{ email: string }>('email');
    const page = membersPage(orgId);
    expect((await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: admin!.email, role: 'finance' })).status).toBe(422);
    expect((await membershipOf(orgId, adminId))!.role).toBe('admin');
  });
});

describe('when a signed-in member opens an invitation to a new role', () => {
  it('then the page says which role they are accepting, in the page\'s language', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members role shown test');
    const finance = await createMember(env.db, orgId, 'finance');
    const link = await invite(client, orgId, finance.email, 'admin');
    const person = httpSession(env.dashboard.url);
    await person.signIn(finance.email, finance.password);
    const english = await (await person.get(link)).text();
    expect(english).toContain('You have been invited to Members role shown test as admin.');
    expect(english).toContain(`Accept as ${finance.email}`);
    person.jar.set('dash_lang', 'it');
    expect(await (await person.get(link)).text()).toContain('Sei stato invitato in Members role shown test come amministratore.');
  });
});

describe('when an address is invited that is already a member with that role or a higher one', () => {
  it('then the admin\'s form refuses it under the e-mail field, as typed, in the page\'s language, and no invitation is made', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Members already member test');
    const finance = await createMember(env.db, orgId, 'finance');
    const own = (await env.db('users').where({ id: adminId }).first<{ email: string }>('email'))!.email;
    const page = membersPage(orgId);
    const refusal = async (email: string, role: 'admin' | 'finance') => {
      const res = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email, role });
      expect(res.status).toBe(422);
      const body = await res.text();
      expect(body).toMatch(new RegExp(`<input id="invite-email" name="email" type="email" value="${email.replaceAll('.', '\\.')}"[^>]* aria-invalid="true"`));
      return /<p class="field-error" id="invite-email-error">([^<]*)<\/p>/.exec(body)?.[1];
    };
    // Their own address as finance, in other letters: it would lower a role.
    expect(await refusal(own.toUpperCase(), 'finance')).toBe('already a member as admin: an invitation cannot lower a role');
    expect(await refusal(own, 'admin')).toBe('already a member as admin');
    expect(await refusal(finance.email, 'finance')).toBe('already a member as finance');
    client.jar.set('dash_lang', 'it');
    expect(await refusal(own, 'finance')).toBe('ha già il ruolo amministratore: un invito non può abbassare un ruolo');
    expect(await env.db('invitations').where({ organization_id: orgId })).toEqual([]);
    // A promotion is still an invitation.
    client.jar.set('dash_lang', 'en');
    expect(await invite(client, orgId, finance.email, 'admin')).toMatch(/^\/invitations\//);
  });

  it('then the operator\'s form refuses it too, and invites the same address to another organization', async () => {
    const org = await createOrganization(env.db, { name: 'Members operator already member test', planId: 'standard' });
    const admin = await createMember(env.db, org.id, 'admin');
    const operator = await signedInOperator(env);
    operator.jar.set('dash_lang', 'it');
    const orgPage = `/operator/organizations/${org.id}`;
    const refused = await operator.post(`${orgPage}/invite`, { _csrf: await operator.csrf(orgPage), email: admin.email, role: 'admin' });
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(body).toMatch(/<p class="field-error" id="invite-email-error">ha già il ruolo amministratore<\/p>/);
    expect(body).toContain('Controlla il modulo: E-mail: ha già il ruolo amministratore');
    expect(await env.db('invitations').where({ organization_id: org.id })).toEqual([]);

    const other = await createOrganization(env.db, { name: 'Members operator other org test', planId: 'standard' });
    const otherPage = `/operator/organizations/${other.id}`;
    expect((await operator.post(`${otherPage}/invite`, { _csrf: await operator.csrf(otherPage), email: admin.email, role: 'admin' })).status).toBe(303);
  });
});

describe('when an admin cancels an open invitation', () => {
  it('then its link stops working, it leaves the list, and the cancellation is audited in English and Italian', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Members cancel test');
    const email = uniqueEmail('cancelled');
    const link = await invite(client, orgId, email, 'admin');
    const id = invitationIdOf(link);
    const table = await openInvitationsTable(client, orgId);
    expect(table).toContain(`action="/orgs/${orgId}/invitations/${id}/cancel"`);

    const cancelled = await client.post(`/orgs/${orgId}/invitations/${id}/cancel`, { _csrf: await client.csrf(membersPage(orgId)) });
    expect(cancelled.status).toBe(302);
    expect(cancelled.headers.get('location')).toBe(`/orgs/${orgId}/members?done=cancelled`);
    expect(await (await client.get(`/orgs/${orgId}/members?done=cancelled`)).text()).toContain('Invitation cancelled');
    expect(await openInvitationsTable(client, orgId)).not.toContain(email);

    const newcomer = httpSession(env.dashboard.url);
    const page = await newcomer.get(link);
    expect(page.status).toBe(404);
    // The page cannot tell a cancelled link from a used or expired one (the row is gone): it names
    // all three, and what to do.
    expect(await page.text()).toContain('it was used, cancelled, or it expired (or it is incomplete: check that it was copied whole). If you have not joined yet, ask whoever invited you for a new one.');
    expect((await newcomer.post(link, { _csrf: await newcomer.csrf('/sign-in'), password: 'a long enough password', confirmPassword: 'a long enough password' })).status).toBe(404);
    expect(await env.db('users').where({ email }).first()).toBeUndefined();

    expect((await auditOf(orgId)).at(-1)).toEqual({ actor: adminId, action: 'member.invitation_cancelled', details: { email, role: 'admin' } });
    expect(await (await client.get(`/orgs/${orgId}/activity`)).text()).toContain(`Cancelled the invitation of ${email} as admin`);
    client.jar.set('dash_lang', 'it');
    expect(await (await client.get(`/orgs/${orgId}/activity`)).text()).toContain(`Annullato l&#39;invito di ${email} come amministratore`);
  });

  it('then without the CSRF token, or from another organization, nothing is cancelled', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members cancel refused test');
    const link = await invite(client, orgId, uniqueEmail('kept'));
    const id = invitationIdOf(link);
    expect((await client.post(`/orgs/${orgId}/invitations/${id}/cancel`, {})).status).toBe(403);

    const stranger = await adminOfNewOrg(env, 'Members cancel stranger test');
    const strangerPage = membersPage(stranger.orgId);
    const token = await stranger.client.csrf(strangerPage);
    // Their own organization in the URL with our invitation's id, and ours: both 404.
    expect((await stranger.client.post(`/orgs/${stranger.orgId}/invitations/${id}/cancel`, { _csrf: token })).status).toBe(404);
    expect((await stranger.client.post(`/orgs/${orgId}/invitations/${id}/cancel`, { _csrf: token })).status).toBe(404);
    expect((await client.post(`/orgs/${orgId}/invitations/not-an-id/cancel`, { _csrf: await client.csrf(membersPage(orgId)) })).status).toBe(404);

    expect((await httpSession(env.dashboard.url).get(link)).status).toBe(200);
  });

  it('then when the audit row cannot be written, the invitation still works', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members cancel audit refused test');
    const link = await invite(client, orgId, uniqueEmail('kept'));
    const token = await client.csrf(membersPage(orgId));
    const restore = await refuseAuditRowsOf(env.db, orgId);
    try {
      expect((await client.post(`/orgs/${orgId}/invitations/${invitationIdOf(link)}/cancel`, { _csrf: token })).status).toBe(500);
    } finally {
      await restore();
    }
    expect((await httpSession(env.dashboard.url).get(link)).status).toBe(200);
  });
});

/**
 * A GET, or with a form a POST, with exactly the headers given: no Origin unless we say so
 * (curl, some proxies).
 */
function rawRequest(url: string, headers: Record<string, string>, form?: Record<string, string>): Promise<{ status: number; body: string }> {
  const body = form ? new URLSearchParams(form).toString() : '';
  const sent = form ? { ...headers, 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) } : headers;
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: form ? 'POST' : 'GET', headers: sent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('when an admin creates an invitation', () => {
  it('then the form answers 303 to the members page, which shows the link once: the next visit lists the invitation without it', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members link once test');
    const page = membersPage(orgId);
    const email = uniqueEmail('once');
    const res = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email, role: 'finance' });
    expect(await res.text()).not.toContain('/invitations/');
    const link = linkIn(await followed(client, res, orgId))!;
    expect(hashToken(link.slice(link.indexOf('/invitations/') + '/invitations/'.length))).toBe((await env.db('invitations').where({ organization_id: orgId }).first('token_hash')).token_hash);

    const again = await (await client.get(page)).text();
    expect(linkIn(again)).toBeUndefined();
    expect(again).not.toContain(link);
    expect(await openInvitationsTable(client, orgId)).toContain(email);
    expect(await env.db('invitations').where({ organization_id: orgId })).toHaveLength(1);
  });
});

describe('when an invitation link is made', () => {
  it('then it names the dashboard the inviter is using, whatever the Origin header says or lacks', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members link test');
    const page = membersPage(orgId);
    const cookie = [...client.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    for (const origin of [undefined, 'https://attacker.example']) {
      const headers = { cookie, ...(origin ? { origin } : {}) };
      const res = await rawRequest(`${env.dashboard.url}${page}/invite`, headers, { _csrf: await client.csrf(page), email: uniqueEmail('linked'), role: 'finance' });
      expect(res.status).toBe(303);
      const link = linkIn((await rawRequest(`${env.dashboard.url}${page}`, headers)).body)!;
      expect(link).toMatch(new RegExp(`^${env.dashboard.url.replaceAll('.', '\\.')}/invitations/[A-Za-z0-9_-]{43}$`));
    }
  });

  it("then with the dashboard's public address configured (PUBLIC_DASHBOARD_URL), the admin's and the operator's links start with it", async () => {
    const behindProxy = await startTestDashboard(env.db, { publicUrl: 'https://dashboard.example.test/' });
    try {
      const proxied = { db: env.db, dashboard: behindProxy };
      const { orgId, client } = await adminOfNewOrg(proxied, 'Members public link test');
      const page = membersPage(orgId);
      const byAdmin = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: uniqueEmail('public'), role: 'finance' });
      expect(linkIn(await followed(client, byAdmin, orgId))).toMatch(/^https:\/\/dashboard\.example\.test\/invitations\/[A-Za-z0-9_-]{43}$/);
      const operator = await signedInOperator(proxied);
      const orgPage = `/operator/organizations/${orgId}`;
      const byOperator = await operator.post(`${orgPage}/invite`, { _csrf: await operator.csrf(orgPage), email: uniqueEmail('public-admin'), role: 'admin' });
      expect(byOperator.status).toBe(303);
      expect(byOperator.headers.get('location')).toBe(orgPage);
      expect(linkIn(await (await operator.get(orgPage)).text())).toMatch(/^https:\/\/dashboard\.example\.test\/invitations\//);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('when someone tries to remove the last admin', () => {
  it('then the only admin cannot remove themselves: 422 in the page language, nothing changes', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Members last admin test');
    const page = membersPage(orgId);
    const refused = await client.post(`${page}/${adminId}/remove`, { _csrf: await client.csrf(page) });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('An organization needs at least one admin');

    client.jar.set('dash_lang', 'it');
    const italian = await client.post(`${page}/${adminId}/remove`, { _csrf: await client.csrf(page) });
    expect(italian.status).toBe(422);
    expect(await italian.text()).toContain('almeno un amministratore');

    expect(await membershipOf(orgId, adminId)).toEqual({ role: 'admin' });
    expect(await auditOf(orgId)).toEqual([]);
  });

  it('then of two admins one may go, and the other is then the last', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Members two admins test');
    const other = await createMember(env.db, orgId, 'admin');
    const finance = await createMember(env.db, orgId, 'finance');
    const page = membersPage(orgId);
    expect((await client.post(`${page}/${other.userId}/remove`, { _csrf: await client.csrf(page) })).status).toBe(302);
    expect((await client.post(`${page}/${adminId}/remove`, { _csrf: await client.csrf(page) })).status).toBe(422);
    // Finance members are not admins: removing them is always allowed.
    expect((await client.post(`${page}/${finance.userId}/remove`, { _csrf: await client.csrf(page) })).status).toBe(302);
    expect(await membershipOf(orgId, adminId)).toEqual({ role: 'admin' });
  });

  it('then an operator cannot remove it either', async () => {
    const org = await createOrganization(env.db, { name: 'Members operator last admin test', planId: 'standard' });
    const admin = await createMember(env.db, org.id, 'admin');
    const operator = await signedInOperator(env);
    const page = membersPage(org.id);
    expect((await operator.post(`${page}/${admin.userId}/remove`, { _csrf: await operator.csrf(page) })).status).toBe(422);
    expect(await membershipOf(org.id, admin.userId)).toEqual({ role: 'admin' });
  });
});

/** The text under one field of a page, or undefined when it has none. */
const errorUnder = (html: string, id: string) => new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(html)?.[1];

describe('when an invitation is accepted with a name', () => {
  it('then a name over 200 characters is refused in the page language and the invitation still works with a shorter one', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members name length test');
    const email = uniqueEmail('named');
    const link = await invite(client, orgId, email);
    const newcomer = httpSession(env.dashboard.url);
    const refused = await newcomer.post(link, { _csrf: await newcomer.csrf(link), password: 'a long enough password', confirmPassword: 'a long enough password', name: 'N'.repeat(201) });
    expect(refused.status).toBe(422);
    const refusedBody = await refused.text();
    expect(errorUnder(refusedBody, 'invite-name')).toBe('at most 200 characters');
    expect(errorUnder(refusedBody, 'invite-password')).toBeUndefined();
    expect(await env.db('users').whereRaw('lower(email) = ?', [email.toLowerCase()]).first()).toBeUndefined();
    // A password too short: the name comes back as typed, the password does not.
    const short = await newcomer.post(link, { _csrf: await newcomer.csrf(link), password: 'short', confirmPassword: 'short', name: 'Maria Rossi' });
    expect(short.status).toBe(422);
    const body = await short.text();
    expect(body).toMatch(/name="name"[^>]*value="Maria Rossi"|value="Maria Rossi"[^>]*name="name"/);
    expect(body).not.toContain('value="short"');
    expect((await newcomer.post(link, { _csrf: await newcomer.csrf(link), password: 'a long enough password', confirmPassword: 'a long enough password', name: 'Maria Rossi' })).status).toBe(302);
  });
});

describe('when a newcomer accepts with a password too short and a name too long', () => {
  it('then both are refused at once, each under its field, the name kept as typed, in the page\'s language', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members both refused test');
    const email = uniqueEmail('both');
    const link = await invite(client, orgId, email);
    const newcomer = httpSession(env.dashboard.url);
    const name = 'N'.repeat(201);
    const refused = await newcomer.post(link, { _csrf: await newcomer.csrf(link), password: 'short', confirmPassword: 'short', name });
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(errorUnder(body, 'invite-name')).toBe('at most 200 characters');
    expect(errorUnder(body, 'invite-password')).toBe('at least 12 characters');
    expect(body).toMatch(new RegExp(`<input id="invite-name" name="name" type="text" value="${name}"[^>]* aria-invalid="true"`));
    expect(body).toMatch(/<input id="invite-password" name="password" type="password"(?![^>]*value=)[^>]* aria-invalid="true"/);
    // The notice names each field as the form labels it.
    expect(body).toContain('Please check the form: Your name: at most 200 characters; New password: at least 12 characters');

    newcomer.jar.set('dash_lang', 'it');
    const italian = await (await newcomer.post(link, { _csrf: await newcomer.csrf(link), password: 'short', confirmPassword: 'short', name })).text();
    expect(errorUnder(italian, 'invite-name')).toBe('al massimo 200 caratteri');
    expect(errorUnder(italian, 'invite-password')).toBe('almeno 12 caratteri');
    expect(italian).toContain('Controlla il modulo: Il tuo nome: al massimo 200 caratteri; Nuova password: almeno 12 caratteri');
    expect(await env.db('users').whereRaw('lower(email) = ?', [email.toLowerCase()]).first()).toBeUndefined();
  });
});

describe('when an admin\'s invitation is refused', () => {
  it('then the e-mail comes back as typed, with the role chosen, and why under it, in the page\'s language', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Invite refused test');
    client.jar.set('dash_lang', 'it');
    const page = membersPage(orgId);
    const refused = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: 'ada@localhost', role: 'admin' });
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(body).toMatch(/<input id="invite-email" name="email" type="email" value="ada@localhost"[^>]* aria-invalid="true"/);
    // Ours, not zod's "Input non valido: indirizzo email": what to type, spelt as the page spells e-mail.
    expect(errorUnder(body, 'invite-email')).toBe('Inserisci un indirizzo e-mail come nome@azienda.it');
    expect(body).toContain('Controlla il modulo: E-mail: Inserisci un indirizzo e-mail come nome@azienda.it');
    expect(body).toMatch(/<option value="admin" selected>/);
    expect(await env.db('invitations').where({ organization_id: orgId })).toEqual([]);

    client.jar.set('dash_lang', 'en');
    const english = await (await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: 'not an address', role: 'finance' })).text();
    expect(errorUnder(english, 'invite-email')).toBe('Enter an e-mail address like name@company.it');
    expect(english).not.toContain('Invalid email address');
  });
});


describe('when an admin removes a member', () => {
  it('then the page says whom, and the activity log names them by e-mail and role, in English and Italian', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Members removal named test');
    const finance = await createMember(env.db, orgId, 'finance');
    const page = membersPage(orgId);
    const res = await client.post(`${page}/${finance.userId}/remove`, { _csrf: await client.csrf(page) });
    expect(res.status).toBe(302);
    const answer = res.headers.get('location')!;
    expect(answer).toBe(`${page}?done=removed&member=${finance.userId}`);
    expect(await (await client.get(answer)).text()).toContain(`Removed ${finance.email}.`);
    expect(await auditOf(orgId)).toEqual([{ actor: adminId, action: 'member.removed', details: { userId: finance.userId, email: finance.email, role: 'finance' } }]);
    const activity = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(activity).toContain(`Removed ${finance.email} (finance)`);
    expect(activity).not.toContain(finance.userId);

    client.jar.set('dash_lang', 'it');
    expect(await (await client.get(answer)).text()).toContain(`Rimosso ${finance.email}.`);
    expect(await (await client.get(`/orgs/${orgId}/activity`)).text()).toContain(`Rimosso ${finance.email} (amministrazione e finanza)`);
  });

  it('then an id in the address that this organization did not remove gets the plain notice, naming no one', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members removal foreign id test');
    // Removed from another organization: its log is not this one's.
    const other = await adminOfNewOrg(env, 'Members removal other org test');
    const elsewhere = await createMember(env.db, other.orgId, 'finance');
    const otherPage = membersPage(other.orgId);
    expect((await other.client.post(`${otherPage}/${elsewhere.userId}/remove`, { _csrf: await other.client.csrf(otherPage) })).status).toBe(302);

    const body = await (await client.get(`${membersPage(orgId)}?done=removed&member=${elsewhere.userId}`)).text();
    expect(body).toContain('Member removed.');
    expect(body).not.toContain(elsewhere.email);
  });

  it('then a removal logged before removals named the address reads by the e-mail the account has now, or by its id once it is gone', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members removal old rows test');
    const kept = await createMember(env.db, orgId, 'finance');
    const gone = 'usr_goneLongAgo0000000000';
    await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'member.removed', details: { userId: kept.userId } });
    await recordAudit(env.db, { organizationId: orgId, actor: 'system', action: 'member.removed', details: { userId: gone } });
    const activity = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(activity).toContain(`Removed member ${kept.email}`);
    expect(activity).toContain(`Removed member ${gone}`);
    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(italian).toContain(`Rimosso il membro ${kept.email}`);
    expect(italian).toContain(`Rimosso il membro ${gone}`);
  });
});

describe('when a newcomer types the new password twice', () => {
  it('then two that differ are refused under the second, as Change password refuses them, in English and Italian, and nothing is made', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Members confirm password test');
    const email = uniqueEmail('confirm');
    const link = await invite(client, orgId, email);
    const newcomer = httpSession(env.dashboard.url);
    const form = await (await newcomer.get(link)).text();
    expect(form).toMatch(/<label for="invite-confirm-password">New password, again<\/label>\s*<input id="invite-confirm-password" name="confirmPassword" type="password" required autocomplete="new-password"/);

    const refused = await newcomer.post(link, { _csrf: await newcomer.csrf(link), name: 'Maria Rossi', password: 'a long enough password', confirmPassword: 'a long enough passwort' });
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(errorUnder(body, 'invite-confirm-password')).toBe('does not match the new password');
    expect(errorUnder(body, 'invite-password')).toBeUndefined();
    expect(body).toContain('Please check the form: New password, again: does not match the new password');
    expect(body).toMatch(/name="name"[^>]*value="Maria Rossi"/);
    expect(body).not.toContain('a long enough passw');
    // Left out (a script, an old page): refused the same way.
    expect((await newcomer.post(link, { _csrf: await newcomer.csrf(link), password: 'a long enough password' })).status).toBe(422);

    newcomer.jar.set('dash_lang', 'it');
    const italian = await (await newcomer.post(link, { _csrf: await newcomer.csrf(link), password: 'a long enough password', confirmPassword: 'something else entirely' })).text();
    expect(errorUnder(italian, 'invite-confirm-password')).toBe('non corrisponde alla nuova password');
    expect(italian).toContain('Controlla il modulo: Nuova password, di nuovo: non corrisponde alla nuova password');
    expect(await env.db('users').whereRaw('lower(email) = ?', [email.toLowerCase()]).first()).toBeUndefined();

    // Typed alike, it joins.
    expect((await newcomer.post(link, { _csrf: await newcomer.csrf(link), password: 'a long enough password', confirmPassword: 'a long enough password' })).status).toBe(302);
  });
});
