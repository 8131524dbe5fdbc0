import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { addMembership, createSession, passwordCheckSlots } from '../core/dashboard-auth/index.js';
import { createMember, createOperator, dashboardForFile, httpSession, refuseAuditRowsOf } from './dashboard-fixtures.js';

// "Change password" against the real dashboard and Postgres: the current password proven as a
// sign-in's is (and counted the same way), the new one checked field by field, the person's
// other sessions and trusted browsers ended, this browser kept signed in.

// Enough password-check places that no request here is turned away as busy.
const slots = passwordCheckSlots({ running: 1, queued: 40, maxWaitMs: 30_000, perAddress: 40 });
const env = dashboardForFile({ signInLimits: { maxFailures: 5, maxDeviceFailures: 5, windowMs: 15 * 60 * 1000, passwordChecks: slots } });

type Client = ReturnType<typeof httpSession>;
const PATH = '/account/password';
const NEW_PASSWORD = 'a new password, long enough';

async function admin() {
  const org = await createOrganization(env.db, { name: 'Password change', planId: 'standard' });
  return { orgId: org.id, ...(await createMember(env.db, org.id, 'admin')) };
}

async function signedIn(who: { email: string; password: string }): Promise<Client> {
  const client = httpSession(env.dashboard.url);
  expect((await client.signIn(who.email, who.password)).status).toBe(302);
  return client;
}

/** The change form as the page draws it (its CSRF and submission tokens), filled with `fields`. */
async function filledForm(client: Client, fields: Record<string, string>): Promise<Record<string, string>> {
  const page = await (await client.get(PATH)).text();
  const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(page)?.[1];
  return { _csrf: hidden('_csrf')!, _submission: hidden('_submission')!, ...fields };
}

const passwordRowsOf = (orgId: string) =>
  env.db('audit_log').where({ organization_id: orgId, action: 'member.password_changed' }).orderBy('id').select<{ actor: string; details: Record<string, unknown> | null }[]>('actor', 'details');

const failedAttempts = async (email: string) =>
  Number((await env.db('sign_in_attempts').whereRaw('lower(email) = ?', [email.toLowerCase()]).where({ succeeded: false }).count<{ count: string }[]>({ count: '*' }))[0]!.count);

describe('when a signed-in person changes their password with the right current one', () => {
  it('then the new password signs in and the old one does not, their other sessions and browsers end, and this browser stays signed in', async () => {
    const who = await admin();
    const here = await signedIn(who);
    const elsewhere = await signedIn(who);
    expect((await elsewhere.get(`/orgs/${who.orgId}`)).status).toBe(200);
    const userId = who.userId;
    expect(Number((await env.db('trusted_devices').where({ user_id: userId }).count<{ count: string }[]>({ count: '*' }))[0]!.count)).toBe(2);
    const deviceBefore = here.jar.get('dash_device');
    const sessionBefore = here.jar.get('dash_session');

    const page = await (await here.get(`/orgs/${who.orgId}`)).text();
    expect(page).toContain(`href="${PATH}"`);
    const res = await here.post(PATH, await filledForm(here, { currentPassword: who.password, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${PATH}?done=changed`);
    expect(await (await here.get(`${PATH}?done=changed`)).text()).toContain('Your password has been changed.');

    // This browser: still signed in, with a new session cookie (a copy of the old one opens
    // nothing), and trusted afresh under the new password.
    expect((await here.get(`/orgs/${who.orgId}`)).status).toBe(200);
    expect(here.jar.get('dash_session')).not.toBe(sessionBefore);
    const oldCookie = httpSession(env.dashboard.url);
    oldCookie.jar.set('dash_session', sessionBefore!);
    expect((await oldCookie.get(`/orgs/${who.orgId}`)).status).toBe(302);
    expect(here.jar.get('dash_device')).not.toBe(deviceBefore);
    expect(Number((await env.db('trusted_devices').where({ user_id: userId }).count<{ count: string }[]>({ count: '*' }))[0]!.count)).toBe(1);
    // The other session: ended.
    const other = await elsewhere.get(`/orgs/${who.orgId}`);
    expect(other.status).toBe(302);
    expect(other.headers.get('location')).toMatch(/^\/sign-in/);

    expect((await httpSession(env.dashboard.url).signIn(who.email, who.password)).status).toBe(401);
    expect((await httpSession(env.dashboard.url).signIn(who.email, NEW_PASSWORD)).status).toBe(302);
  });

  it('then an operator can change theirs too', async () => {
    const operator = await createOperator(env.db);
    const client = await signedIn(operator);
    expect(await (await client.get('/operator')).text()).toContain(`href="${PATH}"`);
    const res = await client.post(PATH, await filledForm(client, { currentPassword: operator.password, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }));
    expect(res.status).toBe(303);
    expect((await httpSession(env.dashboard.url).signIn(operator.email, NEW_PASSWORD)).status).toBe(302);
  });
});

describe('when the form is sent twice (a double-click)', () => {
  it('then the second is answered as a repeat of the first, not refused as a wrong current password', async () => {
    const who = await admin();
    const client = await signedIn(who);
    const form = await filledForm(client, { currentPassword: who.password, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    expect((await client.post(PATH, form)).headers.get('location')).toBe(`${PATH}?done=changed`);
    const again = await client.post(PATH, form);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(`${PATH}?done=repeated`);
    expect(await (await client.get(`${PATH}?done=repeated`)).text()).toContain('Your password was changed by another request just before this one');
    expect(await failedAttempts(who.email)).toBe(0);
  });
});

describe('when two changes race (a double-click before the first answer, two tabs)', () => {
  it('then exactly one changes the password, the other is answered as a repeat, and no wrong guess is counted', async () => {
    const who = await admin();
    const client = await signedIn(who);
    const form = await filledForm(client, { currentPassword: who.password, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    const [a, b] = await Promise.all([client.post(PATH, { ...form }), client.post(PATH, { ...form, _submission: `${form._submission}x` })]);
    expect([a.status, b.status]).toEqual([303, 303]);
    expect([a.headers.get('location'), b.headers.get('location')].sort()).toEqual([`${PATH}?done=changed`, `${PATH}?done=repeated`]);
    expect(await failedAttempts(who.email)).toBe(0);
    expect((await httpSession(env.dashboard.url).signIn(who.email, NEW_PASSWORD)).status).toBe(302);
    // The change that lost the race wrote no activity row either.
    expect(await passwordRowsOf(who.orgId)).toEqual([{ actor: who.userId, details: { email: who.email } }]);
  });
});

describe('when a sign-in with the old password was still in flight as the password changed', () => {
  it('then the session it makes afterwards is never read: sessions are bound to the password they were opened with', async () => {
    const who = await admin();
    const client = await signedIn(who);
    const { password_hash: oldHash } = await env.db('users').where({ id: who.userId }).first<{ password_hash: string }>('password_hash');
    expect((await client.post(PATH, await filledForm(client, { currentPassword: who.password, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }))).status).toBe(303);
    // What that sign-in writes once its check of the old hash has passed.
    const late = await createSession(env.db, { userId: who.userId, passwordHash: oldHash });
    const lateClient = httpSession(env.dashboard.url);
    lateClient.jar.set('dash_session', late.token);
    const res = await lateClient.get(`/orgs/${who.orgId}/keys`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toMatch(/^\/sign-in/);
    expect((await client.get(`/orgs/${who.orgId}/keys`)).status).toBe(200);
  });
});

describe('when the form comes with a damaged submission token', () => {
  it('then it is refused before the password is checked or changed', async () => {
    const who = await admin();
    const client = await signedIn(who);
    const form = await filledForm(client, { currentPassword: who.password, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    expect((await client.post(PATH, { ...form, _submission: 'not/a token' })).status).toBe(400);
    expect((await httpSession(env.dashboard.url).signIn(who.email, who.password)).status).toBe(302);
  });
});

describe('when the current password is wrong', () => {
  it('then the page says so under that field, nothing changes, and the wrong guesses count toward the lock as at sign-in', async () => {
    const who = await admin();
    const client = await signedIn(who);
    // A browser not trusted for the e-mail (its device cookie gone): the e-mail's own lock applies.
    client.jar.delete('dash_device');
    const guess = async (i: number) => client.post(PATH, await filledForm(client, { currentPassword: `guess ${i}`, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }));
    const first = await guess(0);
    expect(first.status).toBe(422);
    const body = await first.text();
    expect(body).toContain('The current password is not right.');
    // Summed up above the form as every refused form is, the field marked and tied to why.
    expect(body).toContain('<div class="notice notice-bad" role="alert" tabindex="-1" autofocus>Please check the form: Current password: The current password is not right.</div>');
    expect(body).toMatch(/id="current-password"[^>]* aria-invalid="true" aria-describedby="current-password-error"/);
    expect(body).not.toContain(NEW_PASSWORD);
    for (let i = 1; i < 5; i++) expect((await guess(i)).status).toBe(422);
    const locked = await guess(5);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await locked.text()).toContain('Too many wrong passwords for this e-mail.');
    // The same lock as the sign-in form's: an unknown browser is refused there too.
    expect((await httpSession(env.dashboard.url).signIn(who.email, who.password)).status).toBe(429);
    // And nothing changed: this session still works with the password it had.
    expect((await client.get(`/orgs/${who.orgId}`)).status).toBe(200);
    expect(await failedAttempts(who.email)).toBe(5);
  });
});

describe('when the new password is refused', () => {
  it('then each refused field is named, in the reader language, and the current password is not checked', async () => {
    const who = await admin();
    const client = await signedIn(who);
    const res = await client.post(PATH, await filledForm(client, { currentPassword: 'not even checked', newPassword: 'short', confirmPassword: 'other' }));
    expect(res.status).toBe(422);
    const body = await res.text();
    expect(body).toContain('at least 12 characters');
    expect(body).toContain('does not match the new password');
    expect(body).toMatch(/<div class="notice notice-bad" role="alert" tabindex="-1" autofocus>Please check the form: New password: at least 12 characters; New password, again: does not match the new password<\/div>/);

    client.jar.set('dash_lang', 'it');
    const italian = await client.post(PATH, await filledForm(client, { currentPassword: 'not even checked', newPassword: 'a long enough password', confirmPassword: 'a different one' }));
    expect(italian.status).toBe(422);
    const text = await italian.text();
    expect(text).toContain('Cambia la tua password');
    expect(text).toContain('non corrisponde alla nuova password');
    expect(text).toMatch(/<div class="notice notice-bad" role="alert" tabindex="-1" autofocus>Controlla il modulo: [^<]*non corrisponde alla nuova password[^<]*<\/div>/);
    expect(await failedAttempts(who.email)).toBe(0);
    expect((await httpSession(env.dashboard.url).signIn(who.email, who.password)).status).toBe(302);
  });
});

describe('when nobody is signed in', () => {
  it('then the page sends them to sign in first, and the form is refused', async () => {
    const anonymous = httpSession(env.dashboard.url);
    const res = await anonymous.get(PATH);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/sign-in?next=${encodeURIComponent(PATH)}`);
    expect((await anonymous.post(PATH, { currentPassword: 'x', newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD })).status).toBe(403);
  });
});

describe('when a member of organizations changes their password', () => {
  it("then each of their organizations' activity log says who did it and when, in English and Italian, with nothing of either password", async () => {
    const who = await admin();
    // The same person is finance in a second organization, and has nothing to do with a third.
    const second = await createOrganization(env.db, { name: 'Password change, second', planId: 'standard' });
    await addMembership(env.db, { userId: who.userId, organizationId: second.id, role: 'finance' });
    const unrelated = await createOrganization(env.db, { name: 'Password change, unrelated', planId: 'standard' });
    const secondAdmin = await createMember(env.db, second.id, 'admin');
    const client = await signedIn(who);
    const before = new Date();
    const res = await client.post(PATH, await filledForm(client, { currentPassword: who.password, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }));
    expect(res.status).toBe(303);

    for (const orgId of [who.orgId, second.id]) {
      const rows = await env.db('audit_log').where({ organization_id: orgId }).select<{ actor: string; action: string; details: Record<string, unknown>; at: Date }[]>('actor', 'action', 'details', 'at');
      expect(rows.map(({ actor, action, details }) => ({ actor, action, details }))).toEqual([{ actor: who.userId, action: 'member.password_changed', details: { email: who.email } }]);
      expect(rows[0]!.at.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
      const stored = JSON.stringify(rows);
      expect(stored).not.toContain(who.password);
      expect(stored).not.toContain(NEW_PASSWORD);
    }
    expect(await env.db('audit_log').where({ organization_id: unrelated.id }).first()).toBeUndefined();

    // Read by the other organization's admin, on its Activity page.
    const reader = await signedIn(secondAdmin);
    const activity = await (await reader.get(`/orgs/${second.id}/activity`)).text();
    expect(activity).toContain(`${who.email} changed their password`);
    expect(activity).not.toContain('<code>member.password_changed</code>');
    reader.jar.set('dash_lang', 'it');
    expect(await (await reader.get(`/orgs/${second.id}/activity`)).text()).toContain(`${who.email} ha cambiato la propria password`);
  });

  it('then a refused change writes no row: a wrong current password, a new one too short or not confirmed', async () => {
    const who = await admin();
    const client = await signedIn(who);
    expect((await client.post(PATH, await filledForm(client, { currentPassword: 'not the password', newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }))).status).toBe(422);
    expect((await client.post(PATH, await filledForm(client, { currentPassword: who.password, newPassword: 'short', confirmPassword: 'short' }))).status).toBe(422);
    expect((await client.post(PATH, await filledForm(client, { currentPassword: who.password, newPassword: NEW_PASSWORD, confirmPassword: `${NEW_PASSWORD}!` }))).status).toBe(422);
    expect(await env.db('audit_log').where({ organization_id: who.orgId }).first()).toBeUndefined();
  });

  it('then, when the activity row cannot be written, the password does not change either: the page answers 500 and the old one still works', async () => {
    const who = await admin();
    const client = await signedIn(who);
    const elsewhere = await signedIn(who);
    const form = await filledForm(client, { currentPassword: who.password, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    const sessionBefore = client.jar.get('dash_session');
    const restore = await refuseAuditRowsOf(env.db, who.orgId);
    try {
      expect((await client.post(PATH, form)).status).toBe(500);
    } finally {
      await restore();
    }
    expect(client.jar.get('dash_session')).toBe(sessionBefore);
    expect((await client.get(`/orgs/${who.orgId}`)).status).toBe(200);
    expect((await elsewhere.get(`/orgs/${who.orgId}`)).status).toBe(200);
    expect((await httpSession(env.dashboard.url).signIn(who.email, NEW_PASSWORD)).status).toBe(401);
    expect((await httpSession(env.dashboard.url).signIn(who.email, who.password)).status).toBe(302);
    expect(await env.db('audit_log').where({ organization_id: who.orgId }).first()).toBeUndefined();
  });
});

describe('when an operator, who belongs to no organization, changes their password', () => {
  it('then no activity row is written anywhere: there is no organization to write it in', async () => {
    const operator = await createOperator(env.db);
    const { id: operatorId } = await env.db('users').whereRaw('lower(email) = ?', [operator.email.toLowerCase()]).first<{ id: string }>('id');
    const client = await signedIn(operator);
    expect((await client.post(PATH, await filledForm(client, { currentPassword: operator.password, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }))).status).toBe(303);
    expect(await env.db('audit_log').where({ actor: operatorId }).first()).toBeUndefined();
  });
});
