import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { adminOfNewOrg, createMember, dashboardForFile, httpSession, signedInOperator } from './dashboard-fixtures.js';

// A member's role changed in place on the members page, over real HTTP and Postgres: the person
// keeps their membership, loses (or gains) rights at their next request, the organization keeps
// an admin, and each change is one audit row.

const env = dashboardForFile();

type Client = ReturnType<typeof httpSession>;

const membersPage = (orgId: string) => `/orgs/${orgId}/members`;

async function changeRole(client: Client, orgId: string, userId: string, role: string, csrf?: string): Promise<Response> {
  return client.post(`${membersPage(orgId)}/${userId}/role`, { _csrf: csrf ?? (await client.csrf(membersPage(orgId))), role });
}

/** The members table's row of one address. */
async function rowOf(client: Client, orgId: string, email: string): Promise<string> {
  const html = await (await client.get(membersPage(orgId))).text();
  const start = html.lastIndexOf('<tr>', html.indexOf(`<td>${email}`));
  return start < 0 ? '' : html.slice(start, html.indexOf('</tr>', start));
}

const membershipOf = (orgId: string, userId: string) =>
  env.db('memberships').where({ organization_id: orgId, user_id: userId }).first<{ role: string; created_at: Date } | undefined>('role', 'created_at');
const roleChangesOf = (orgId: string) =>
  env.db('audit_log').where({ organization_id: orgId, action: 'member.role_changed' }).orderBy('id').select<{ actor: string; details: Record<string, unknown> }[]>('actor', 'details');

describe('when an admin makes another admin finance', () => {
  it('then that person\'s open session loses the keys page at its next request, the page and the activity log say so in English and Italian, and one row is written', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Roles demote test');
    const other = await createMember(env.db, orgId, 'admin');
    const person = httpSession(env.dashboard.url);
    await person.signIn(other.email, other.password);
    expect((await person.get(`/orgs/${orgId}/keys`)).status).toBe(200);
    const since = (await membershipOf(orgId, other.userId))!.created_at;
    expect(await rowOf(client, orgId, other.email)).toContain(`action="/orgs/${orgId}/members/${other.userId}/role"`);

    const res = await changeRole(client, orgId, other.userId, 'finance');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${membersPage(orgId)}?done=role&member=${other.userId}`);
    expect(await (await client.get(res.headers.get('location')!)).text()).toContain(`${other.email} is now finance.`);

    // The same session, not signed in again.
    expect((await person.get(`/orgs/${orgId}/keys`)).status).toBe(403);
    expect((await person.get(`/orgs/${orgId}`)).status).toBe(200);
    expect(await membershipOf(orgId, other.userId)).toEqual({ role: 'finance', created_at: since });
    expect(await rowOf(client, orgId, other.email)).toContain('<span class="badge badge-info">finance</span>');

    expect(await roleChangesOf(orgId)).toEqual([{ actor: adminId, details: { userId: other.userId, email: other.email, from: 'admin', to: 'finance' } }]);
    expect(await (await client.get(`/orgs/${orgId}/activity`)).text()).toContain(`Changed the role of ${other.email} from admin to finance`);
    client.jar.set('dash_lang', 'it');
    // "ad", not "a", before the vowel.
    expect(await (await client.get(`/orgs/${orgId}/activity`)).text()).toContain(`Cambiato il ruolo di ${other.email} da amministratore ad amministrazione e finanza`);
    expect(await (await client.get(res.headers.get('location')!)).text()).toContain(`Nuovo ruolo di ${other.email}: amministrazione e finanza.`);
  });
});

describe('when a finance member is made admin in place', () => {
  it('then they open the keys page at their next request, and an admin link made before a later demotion no longer works', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Roles promote test');
    const finance = await createMember(env.db, orgId, 'finance');
    const person = httpSession(env.dashboard.url);
    await person.signIn(finance.email, finance.password);
    expect((await person.get(`/orgs/${orgId}/keys`)).status).toBe(403);
    // A promotion link sent first, then the role changed on the page instead.
    const page = membersPage(orgId);
    const invited = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: finance.email, role: 'admin' });
    expect(invited.status).toBe(303);
    const link = /\/invitations\/[A-Za-z0-9_-]{43}/.exec(await (await client.get(page)).text())![0];

    expect((await changeRole(client, orgId, finance.userId, 'admin')).status).toBe(303);
    expect((await person.get(`/orgs/${orgId}/keys`)).status).toBe(200);

    // Made finance again, the older admin link would undo it: it is closed.
    expect((await changeRole(client, orgId, finance.userId, 'finance')).status).toBe(303);
    expect((await person.post(link, { _csrf: await person.csrf('/orgs') })).status).toBe(404);
    expect((await membershipOf(orgId, finance.userId))!.role).toBe('finance');
    expect((await roleChangesOf(orgId)).map((r) => [r.details.from, r.details.to])).toEqual([['finance', 'admin'], ['admin', 'finance']]);

    // Both ways, each role said with the "to" it takes: in Italian "ad" before either role's vowel.
    const activity = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(activity).toContain(`Changed the role of ${finance.email} from finance to admin`);
    expect(activity).toContain(`Changed the role of ${finance.email} from admin to finance`);
    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(italian).toContain(`Cambiato il ruolo di ${finance.email} da amministrazione e finanza ad amministratore`);
    expect(italian).toContain(`Cambiato il ruolo di ${finance.email} da amministratore ad amministrazione e finanza`);
    expect(italian).not.toMatch(/ a amministra/);
  });
});

describe('when the last admin tries to make themselves finance', () => {
  it('then it is refused with the last-admin wording in the page\'s language, and nothing changes', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Roles last admin test');
    const refused = await changeRole(client, orgId, adminId, 'finance');
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('An organization needs at least one admin');

    client.jar.set('dash_lang', 'it');
    const italian = await changeRole(client, orgId, adminId, 'finance');
    expect(italian.status).toBe(422);
    expect(await italian.text()).toContain("L&#39;organizzazione deve avere almeno un amministratore");

    expect((await membershipOf(orgId, adminId))!.role).toBe('admin');
    expect(await env.db('audit_log').where({ organization_id: orgId })).toEqual([]);
    expect((await client.get(`/orgs/${orgId}/keys`)).status).toBe(200);
  });

  it('then with another admin they may, and land on the overview, which finance still sees', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Roles self demote test');
    await createMember(env.db, orgId, 'admin');
    // Their own row asks first.
    expect(await (await client.get(membersPage(orgId))).text()).toContain('data-confirm="Change your own role?');
    const res = await changeRole(client, orgId, adminId, 'finance');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/orgs/${orgId}`);
    expect((await client.get(`/orgs/${orgId}`)).status).toBe(200);
    expect((await client.get(membersPage(orgId))).status).toBe(403);
    expect((await membershipOf(orgId, adminId))!.role).toBe('finance');
    expect(await roleChangesOf(orgId)).toHaveLength(1);
  });
});

describe('when someone who may not manage members sends the form', () => {
  it('then finance gets 403, another organization\'s admin 404, an unknown role 422, and nothing changes', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Roles refused test');
    const finance = await createMember(env.db, orgId, 'finance');
    const other = await createMember(env.db, orgId, 'admin');

    const person = httpSession(env.dashboard.url);
    await person.signIn(finance.email, finance.password);
    const token = await person.csrf(`/orgs/${orgId}`);
    expect((await changeRole(person, orgId, other.userId, 'finance', token)).status).toBe(403);
    expect((await changeRole(person, orgId, finance.userId, 'admin', token)).status).toBe(403);

    const stranger = await adminOfNewOrg(env, 'Roles stranger test');
    const strangerToken = await stranger.client.csrf(membersPage(stranger.orgId));
    // Our organization in the URL, and theirs with our member: both 404.
    expect((await changeRole(stranger.client, orgId, other.userId, 'finance', strangerToken)).status).toBe(404);
    expect((await changeRole(stranger.client, stranger.orgId, other.userId, 'finance', strangerToken)).status).toBe(404);
    expect((await changeRole(client, orgId, 'usr_nobody', 'finance')).status).toBe(404);

    const unknown = await changeRole(client, orgId, other.userId, 'operator');
    expect(unknown.status).toBe(422);
    // Without the CSRF token: refused like every other form.
    expect((await client.post(`${membersPage(orgId)}/${other.userId}/role`, { role: 'finance' })).status).toBe(403);

    expect((await membershipOf(orgId, other.userId))!.role).toBe('admin');
    expect((await membershipOf(orgId, finance.userId))!.role).toBe('finance');
    expect((await membershipOf(orgId, adminId))!.role).toBe('admin');
    expect(await roleChangesOf(orgId)).toEqual([]);
  });
});

describe('when the role chosen is the one the member holds', () => {
  it('then nothing changes, no row is written, and the page says so', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Roles same role test');
    const finance = await createMember(env.db, orgId, 'finance');
    const res = await changeRole(client, orgId, finance.userId, 'finance');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${membersPage(orgId)}?done=role_unchanged&member=${finance.userId}`);
    expect(await (await client.get(res.headers.get('location')!)).text()).toContain(`${finance.email} is already finance: nothing changed.`);
    expect(await env.db('audit_log').where({ organization_id: orgId })).toEqual([]);
  });
});

describe('when changes are sent at once', () => {
  it('then a double submit makes one change and one row', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Roles double submit test');
    const other = await createMember(env.db, orgId, 'admin');
    const token = await client.csrf(membersPage(orgId));
    const answers = await Promise.all([1, 2, 3, 4].map(() => changeRole(client, orgId, other.userId, 'finance', token)));
    expect(answers.map((a) => a.status)).toEqual([303, 303, 303, 303]);
    expect(answers.map((a) => a.headers.get('location')!.replace(/\?.*/, '?'))).toEqual(Array(4).fill(`${membersPage(orgId)}?`));
    expect(answers.filter((a) => a.headers.get('location')!.includes('done=role&'))).toHaveLength(1);
    expect((await membershipOf(orgId, other.userId))!.role).toBe('finance');
    expect(await roleChangesOf(orgId)).toHaveLength(1);
  });

  it('then two admins making each other finance cannot leave the organization without an admin', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Roles each other test');
    const other = await createMember(env.db, orgId, 'admin');
    const person = httpSession(env.dashboard.url);
    await person.signIn(other.email, other.password);
    const [mine, theirs] = await Promise.all([client.csrf(membersPage(orgId)), person.csrf(membersPage(orgId))]);
    const answers = await Promise.all([changeRole(client, orgId, other.userId, 'finance', mine), changeRole(person, orgId, adminId, 'finance', theirs)]);
    // One is made; the other is refused as the last admin's, or 403 when its sender was already
    // finance by the time their request was let in.
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses[0]).toBe(303);
    expect([403, 422]).toContain(statuses[1]);
    const roles = [(await membershipOf(orgId, adminId))!.role, (await membershipOf(orgId, other.userId))!.role].sort();
    expect(roles).toEqual(['admin', 'finance']);
    expect(await roleChangesOf(orgId)).toHaveLength(1);
  });
});

describe('when an operator changes a role', () => {
  it('then it is made as an admin\'s is, and the last admin is kept for them too', async () => {
    const org = await createOrganization(env.db, { name: 'Roles operator test', planId: 'standard' });
    const admin = await createMember(env.db, org.id, 'admin');
    const finance = await createMember(env.db, org.id, 'finance');
    const operator = await signedInOperator(env);
    expect((await changeRole(operator, org.id, admin.userId, 'finance')).status).toBe(422);
    expect((await changeRole(operator, org.id, finance.userId, 'admin')).status).toBe(303);
    expect((await changeRole(operator, org.id, admin.userId, 'finance')).status).toBe(303);
    expect((await membershipOf(org.id, admin.userId))!.role).toBe('finance');
    expect((await membershipOf(org.id, finance.userId))!.role).toBe('admin');
    expect(await roleChangesOf(org.id)).toHaveLength(2);
  });
});
