import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { hashToken } from '../core/dashboard-auth/index.js';
import { adminOfNewOrg, createMember, dashboardForFile, httpSession } from './dashboard-fixtures.js';

// An action sent again from a page drawn before it was done (a second tab, a double submit):
// the page says it was already done, or that the member is no longer in the organization, in
// English and Italian; not the 404 that tells of lost access. Another organization's ids are
// still refused with that 404, exactly as before.

const env = dashboardForFile();

type Client = ReturnType<typeof httpSession>;

const membersPage = (orgId: string) => `/orgs/${orgId}/members`;

/** The notice of the page a redirect leads to. */
async function noticeAfter(client: Client, res: Response): Promise<string> {
  expect(res.status).toBe(303);
  const location = res.headers.get('location')!;
  const page = await (await client.get(location)).text();
  return /<div class="notice notice-\w+" role="\w+">([^<]*)<\/div>/.exec(page)?.[1] ?? '';
}

/** The hidden fields of a member's Reset password form, from a page drawn now. */
async function resetForm(client: Client, orgId: string, userId: string): Promise<Record<string, string>> {
  const page = await (await client.get(membersPage(orgId))).text();
  const start = page.indexOf(`action="/orgs/${orgId}/members/${userId}/password-reset"`);
  const form = page.slice(start, page.indexOf('</form>', start));
  const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(form)?.[1];
  return { _csrf: hidden('_csrf')!, _submission: hidden('_submission')! };
}

describe('when a member is removed from a page drawn before', () => {
  it('then Remove, Change role and Reset password sent again say the member is no longer in the organization, in English and Italian, and change nothing', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Stale member actions test');
    const member = await createMember(env.db, orgId, 'finance');
    const page = membersPage(orgId);
    const csrf = await client.csrf(page);
    // Both tabs drew the page (and its forms) before the removal.
    const staleReset = await resetForm(client, orgId, member.userId);
    expect((await client.post(`${page}/${member.userId}/remove`, { _csrf: csrf })).status).toBe(302);
    const auditRows = async () => (await env.db('audit_log').where({ organization_id: orgId }).count<{ n: string }[]>({ n: '*' }))[0]!.n;
    const rowsAfterRemoval = await auditRows();

    const today = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date());
    const again = await client.post(`${page}/${member.userId}/remove`, { _csrf: csrf });
    expect(again.headers.get('location')).toBe(`${page}?done=already_removed&member=${member.userId}`);
    expect(await noticeAfter(client, again)).toBe(`${member.email} had already been removed from this organization, on ${today}: nothing changed.`);

    const role = await client.post(`${page}/${member.userId}/role`, { _csrf: csrf, role: 'admin' });
    expect(await noticeAfter(client, role)).toBe(`${member.email} is no longer a member of this organization (removed on ${today}): nothing was changed.`);
    const reset = await client.post(`${page}/${member.userId}/password-reset`, staleReset);
    expect(await noticeAfter(client, reset)).toBe(`${member.email} is no longer a member of this organization (removed on ${today}): nothing was changed.`);

    client.jar.set('dash_lang', 'it');
    const todayIt = new Intl.DateTimeFormat('it-IT', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date());
    // The article elided before the 1st, 8th and 11th ("l'8 dic"), as on every page.
    const elided = /^(1|8|11)\s/.test(todayIt);
    expect(await noticeAfter(client, await client.post(`${page}/${member.userId}/remove`, { _csrf: csrf })))
      .toBe(`La rimozione di ${member.email} dall&#39;organizzazione era già avvenuta ${elided ? 'l&#39;' : 'il '}${todayIt}: non è cambiato nulla.`);
    expect(await noticeAfter(client, await client.post(`${page}/${member.userId}/role`, { _csrf: csrf, role: 'admin' })))
      .toBe(`${member.email} non fa più parte di questa organizzazione (rimozione ${elided ? 'dell&#39;' : 'del '}${todayIt}): non è stato cambiato nulla.`);

    expect(await env.db('memberships').where({ organization_id: orgId, user_id: member.userId }).first()).toBeUndefined();
    expect(await env.db('password_resets').where({ user_id: member.userId }).first()).toBeUndefined();
    expect(await auditRows()).toBe(rowsAfterRemoval);
  });

  it('then a member of another organization, or an unknown id, is still the 404 it was', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Stale member stranger test');
    const other = await createOrganization(env.db, { name: 'Stale member other organization', planId: 'standard' });
    const stranger = await createMember(env.db, other.id, 'finance');
    const page = membersPage(orgId);
    const csrf = await client.csrf(page);
    for (const userId of [stranger.userId, 'usr_nobody']) {
      expect((await client.post(`${page}/${userId}/remove`, { _csrf: csrf })).status, userId).toBe(404);
      expect((await client.post(`${page}/${userId}/role`, { _csrf: csrf, role: 'admin' })).status, userId).toBe(404);
      expect((await client.post(`${page}/${userId}/password-reset`, { _csrf: csrf })).status, userId).toBe(404);
    }
    // Removed from the other organization, not from this one: still no business of this one's admins.
    const otherAdmin = httpSession(env.dashboard.url);
    const admin = await createMember(env.db, other.id, 'admin');
    await otherAdmin.signIn(admin.email, admin.password);
    expect((await otherAdmin.post(`${membersPage(other.id)}/${stranger.userId}/remove`, { _csrf: await otherAdmin.csrf(membersPage(other.id)) })).status).toBe(302);
    expect((await client.post(`${page}/${stranger.userId}/remove`, { _csrf: csrf })).status).toBe(404);
  });
});

describe('when an invitation is cancelled from a page drawn before', () => {
  it('then Cancel sent again says it had already been cancelled, in English and Italian; another organization\'s invitation is still 404', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Stale cancel test');
    const page = membersPage(orgId);
    const invited = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: 'stale-cancel@example.test', role: 'finance' });
    const link = /\/invitations\/([A-Za-z0-9_-]{43})/.exec(await (await client.get(invited.headers.get('location')!)).text())!;
    const id = hashToken(link[1]!);
    const csrf = await client.csrf(page);
    expect((await client.post(`/orgs/${orgId}/invitations/${id}/cancel`, { _csrf: csrf })).headers.get('location')).toBe(`${page}?done=cancelled`);

    const again = await client.post(`/orgs/${orgId}/invitations/${id}/cancel`, { _csrf: csrf });
    expect(again.headers.get('location')).toBe(`${page}?done=invitation_closed&invitation=${id}`);
    expect(await noticeAfter(client, again)).toBe('That invitation had already been cancelled, or closed when its address joined or was removed: its link no longer works, and nothing changed.');
    client.jar.set('dash_lang', 'it');
    expect(await noticeAfter(client, await client.post(`/orgs/${orgId}/invitations/${id}/cancel`, { _csrf: csrf })))
      .toBe('Quell&#39;invito era già stato annullato, o chiuso quando il suo indirizzo è entrato nell&#39;organizzazione o ne è stato rimosso: il suo link non funziona più e non è cambiato nulla.');
    expect((await env.db('audit_log').where({ organization_id: orgId, action: 'member.invitation_cancelled' })).length).toBe(1);

    // Accepted meanwhile: said so, naming the address.
    client.jar.set('dash_lang', 'en');
    const second = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: 'stale-accepted@example.test', role: 'finance' });
    const secondLink = /\/invitations\/[A-Za-z0-9_-]{43}/.exec(await (await client.get(second.headers.get('location')!)).text())![0];
    const newcomer = httpSession(env.dashboard.url);
    expect((await newcomer.post(secondLink, { _csrf: await newcomer.csrf(secondLink), password: 'a long enough password', confirmPassword: 'a long enough password' })).status).toBe(302);
    const secondId = hashToken(secondLink.split('/').pop()!);
    expect(await noticeAfter(client, await client.post(`/orgs/${orgId}/invitations/${secondId}/cancel`, { _csrf: csrf })))
      .toBe('The invitation to stale-accepted@example.test had already been accepted: nothing changed.');

    // Another organization's admin, with this organization's open invitation's id: 404 as before.
    const third = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: 'stale-open@example.test', role: 'finance' });
    const thirdId = hashToken(/\/invitations\/([A-Za-z0-9_-]{43})/.exec(await (await client.get(third.headers.get('location')!)).text())![1]!);
    const stranger = await adminOfNewOrg(env, 'Stale cancel stranger test');
    const strangerCsrf = await stranger.client.csrf(membersPage(stranger.orgId));
    expect((await stranger.client.post(`/orgs/${stranger.orgId}/invitations/${thirdId}/cancel`, { _csrf: strangerCsrf })).status).toBe(404);
    expect((await stranger.client.post(`/orgs/${orgId}/invitations/${thirdId}/cancel`, { _csrf: strangerCsrf })).status).toBe(404);
    expect(await env.db('invitations').where({ token_hash: thirdId }).first()).toBeDefined();
  });
});

describe('when an alert threshold is removed from a page drawn before', () => {
  it('then Remove sent again says it had already been removed, in English and Italian; another organization\'s threshold is still 404', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Stale threshold test');
    const page = `/orgs/${orgId}/alerts`;
    await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind: 'percent_used', value: '80' });
    const { id } = await env.db('alert_thresholds').where({ organization_id: orgId }).first<{ id: string }>('id');
    const csrf = await client.csrf(page);
    expect((await client.post(`${page}/thresholds/${id}/delete`, { _csrf: csrf })).headers.get('location')).toBe(`${page}?done=saved`);

    const again = await client.post(`${page}/thresholds/${id}/delete`, { _csrf: csrf });
    expect(again.headers.get('location')).toBe(`${page}?done=threshold_gone`);
    const said = async () => /<div class="notice notice-info" role="status">([^<]*)<\/div>/.exec(await (await client.get(again.headers.get('location')!)).text())?.[1];
    expect(await said()).toBe('That threshold had already been removed: nothing changed.');
    client.jar.set('dash_lang', 'it');
    expect(await said()).toBe('Quella soglia era già stata rimossa: non è cambiato nulla.');
    expect(await env.db('audit_log').where({ organization_id: orgId, action: 'alerts.threshold_removed' }).pluck('details')).toEqual([{ thresholdId: id }]);

    const stranger = await adminOfNewOrg(env, 'Stale threshold stranger test');
    const strangerPage = `/orgs/${stranger.orgId}/alerts`;
    await stranger.client.post(`${strangerPage}/thresholds`, { _csrf: await stranger.client.csrf(strangerPage), kind: 'percent_used', value: '90' });
    const theirs = (await env.db('alert_thresholds').where({ organization_id: stranger.orgId }).first<{ id: string }>('id')).id;
    expect((await client.post(`${page}/thresholds/${theirs}/delete`, { _csrf: csrf })).status).toBe(404);
    expect((await client.post(`${page}/thresholds/not-an-id/delete`, { _csrf: csrf })).status).toBe(404);
    expect(await env.db('alert_thresholds').where({ id: theirs }).first()).toBeDefined();
  });
});
