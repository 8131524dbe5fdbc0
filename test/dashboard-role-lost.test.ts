import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { addMembership } from '../core/dashboard-auth/index.js';
import { adminOfNewOrg, createMember, dashboardForFile, httpSession, signedInOperator } from './dashboard-fixtures.js';

// An admin made finance, or removed, while signed in, over real HTTP and Postgres: their next
// request to a page they may no longer open is a 403 that says what changed, when, and where
// they can still go, in English and Italian; someone who never belonged still gets the 404
// that reveals nothing.

const env = dashboardForFile();

type Client = ReturnType<typeof httpSession>;

const membersPage = (orgId: string) => `/orgs/${orgId}/members`;

async function byAdmin(client: Client, orgId: string, userId: string, what: { role: string } | 'remove'): Promise<void> {
  const path = `${membersPage(orgId)}/${userId}/${what === 'remove' ? 'remove' : 'role'}`;
  const res = await client.post(path, { _csrf: await client.csrf(membersPage(orgId)), ...(what === 'remove' ? {} : what) });
  expect([302, 303]).toContain(res.status);
}

/** The page's main content, without the side bar and top bar. */
const mainOf = (page: string) => /<main[^>]*>([\s\S]*)<\/main>/.exec(page)![1]!;
const linksOf = (html: string) => [...html.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1]);

async function signedInMember(orgName: string) {
  const { orgId, client } = await adminOfNewOrg(env, orgName);
  const member = await createMember(env.db, orgId, 'admin');
  const person = httpSession(env.dashboard.url);
  expect((await person.signIn(member.email, member.password)).status).toBe(302);
  expect((await person.get(`/orgs/${orgId}/keys`)).status).toBe(200);
  return { orgId, client, member, person };
}

describe('when an admin made finance while signed in opens an admin page', () => {
  it('then the 403 says their role there was changed to finance and when, and links the pages finance opens, in English and Italian', async () => {
    const { orgId, client, member, person } = await signedInMember('Role lost <demoted>');
    await byAdmin(client, orgId, member.userId, { role: 'finance' });
    const { at } = await env.db('audit_log').where({ organization_id: orgId, action: 'member.role_changed' }).first<{ at: Date }>('at');

    const res = await person.get(`/orgs/${orgId}/keys`);
    expect(res.status).toBe(403);
    const page = await res.text();
    const main = mainOf(page);
    expect(main).toContain('<h1>Not open to your role</h1>');
    const when = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(at);
    expect(main).toContain(`Your role in Role lost &lt;demoted&gt; was changed to finance on ${when} UTC: this page or action is for its admins.`);
    expect(main).toContain('As finance, you can open:');
    expect(linksOf(main)).toEqual([`/orgs/${orgId}`, `/orgs/${orgId}/usage`, `/orgs/${orgId}/report`, `/orgs/${orgId}/ledger`, `/orgs/${orgId}/alerts`]);
    // The side bar is the organization's, as finance sees it.
    expect(page).toContain(`<a href="/orgs/${orgId}/usage">Usage</a>`);
    expect(page).not.toContain(`<a href="/orgs/${orgId}/keys">`);
    // Each link opens.
    for (const link of linksOf(main)) expect((await person.get(link!)).status).toBe(200);

    // A form from a page drawn before the change: the same answer, and nothing made.
    const sent = await person.post(`/orgs/${orgId}/keys`, { _csrf: await person.csrf(`/orgs/${orgId}`), name: 'after demotion' });
    expect(sent.status).toBe(403);
    expect(await sent.text()).toContain('was changed to finance');
    expect(await env.db('api_keys').where({ organization_id: orgId }).first()).toBeUndefined();

    person.jar.set('dash_lang', 'it');
    const italian = mainOf(await (await person.get(`/orgs/${orgId}/members`)).text());
    expect(italian).toContain('<h1>Non disponibile per il tuo ruolo</h1>');
    expect(italian).toMatch(/Dal \d+ \w+ \d{4}, \d\d:\d\d UTC il tuo ruolo in Role lost &lt;demoted&gt; è amministrazione e finanza: questa pagina o azione è riservata ai suoi amministratori\./);
    expect(italian).toContain('Con il ruolo amministrazione e finanza puoi aprire:');
    expect(italian).toContain(`<a href="/orgs/${orgId}/ledger">Registro</a>`);
  });
});

describe('when a member who was always finance opens an admin page by its address', () => {
  it('then the 403 names their role there, without saying it changed', async () => {
    const { orgId } = await adminOfNewOrg(env, 'Role lost always finance');
    const finance = await createMember(env.db, orgId, 'finance');
    const person = httpSession(env.dashboard.url);
    await person.signIn(finance.email, finance.password);
    const res = await person.get(`/orgs/${orgId}/activity`);
    expect(res.status).toBe(403);
    const main = mainOf(await res.text());
    expect(main).toContain('Your role in Role lost always finance is finance: this page or action is for its admins.');
    expect(main).not.toContain('changed');
    expect(linksOf(main)).toContain(`/orgs/${orgId}/usage`);
  });

  it('then an older change to finance is not said once they were removed and joined again as finance', async () => {
    const { orgId, client, member, person } = await signedInMember('Role lost older change');
    await byAdmin(client, orgId, member.userId, { role: 'finance' });
    await byAdmin(client, orgId, member.userId, 'remove');
    // Invited again as finance, and the link accepted in their open session.
    const page = membersPage(orgId);
    expect((await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: member.email, role: 'finance' })).status).toBe(303);
    const link = /\/invitations\/[A-Za-z0-9_-]{43}/.exec(await (await client.get(page)).text())![0];
    expect((await person.post(link, { _csrf: await person.csrf(link) })).status).toBe(302);
    const main = mainOf(await (await person.get(`/orgs/${orgId}/keys`)).text());
    expect(main).toContain('Your role in Role lost older change is finance: this page or action is for its admins.');
  });
});

describe('when an admin removed while signed in opens the organization again', () => {
  it('then the 403 says they are no longer a member and since when, and lists the organizations they still belong to, in English and Italian', async () => {
    const { orgId, client, member, person } = await signedInMember('Role lost removed');
    const other = await createOrganization(env.db, { name: 'Role lost, still a member', planId: 'standard' });
    await addMembership(env.db, { userId: member.userId, organizationId: other.id, role: 'finance' });
    await byAdmin(client, orgId, member.userId, 'remove');
    const { at } = await env.db('audit_log').where({ organization_id: orgId, action: 'member.removed' }).first<{ at: Date }>('at');

    for (const path of [`/orgs/${orgId}`, `/orgs/${orgId}/keys`]) {
      const res = await person.get(path);
      expect(res.status).toBe(403);
      const main = mainOf(await res.text());
      expect(main).toContain('<h1>No longer a member</h1>');
      const when = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(at);
      expect(main).toContain(`You are no longer a member of this organization: you were removed on ${when} UTC, and its pages are closed to you.`);
      expect(main).toContain('To come back, ask one of its admins for a new invitation.');
      expect(linksOf(main)).toEqual([`/orgs/${other.id}`]);
      // Nothing of the organization itself: not even its name.
      expect(main).not.toContain('Role lost removed');
    }
    person.jar.set('dash_lang', 'it');
    const italian = mainOf(await (await person.get(`/orgs/${orgId}`)).text());
    expect(italian).toContain('<h1>Non sei più membro</h1>');
    expect(italian).toMatch(/Non fai più parte di questa organizzazione dal \d+ \w+ \d{4}, \d\d:\d\d UTC: le sue pagine non ti sono più accessibili\./);
    expect(italian).toContain('Le tue organizzazioni:');
    expect(italian).toContain('Per rientrare, chiedi a uno dei suoi amministratori un nuovo invito.');
  });

  it('then, invited and joined again, they open it as their new role allows', async () => {
    const { orgId, client, member, person } = await signedInMember('Role lost rejoined');
    await byAdmin(client, orgId, member.userId, 'remove');
    expect((await person.get(`/orgs/${orgId}`)).status).toBe(403);
    await addMembership(env.db, { userId: member.userId, organizationId: orgId, role: 'finance' });
    expect((await person.get(`/orgs/${orgId}`)).status).toBe(200);
    const main = mainOf(await (await person.get(`/orgs/${orgId}/keys`)).text());
    expect(main).toContain('is finance: this page or action is for its admins.');
  });
});

describe('when someone who never belonged to an organization opens it', () => {
  it('then it is the same 404 as for one that does not exist, whoever was removed from it', async () => {
    const { orgId, client, member } = await signedInMember('Role lost stranger');
    await byAdmin(client, orgId, member.userId, 'remove');
    const stranger = await adminOfNewOrg(env, 'Role lost, elsewhere');
    const theirs = await stranger.client.get(`/orgs/${orgId}`);
    const nowhere = await stranger.client.get('/orgs/org_doesnotexist');
    expect([theirs.status, nowhere.status]).toEqual([404, 404]);
    expect(mainOf(await theirs.text())).toBe(mainOf(await nowhere.text()));
    const operator = await signedInOperator(env);
    expect((await operator.get('/orgs/org_doesnotexist')).status).toBe(404);
  });
});
