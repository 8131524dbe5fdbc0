import { describe, expect, inject, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { addMembership, hashToken, issuePasswordReset, passwordCheckSlots, verifyPassword } from '../core/dashboard-auth/index.js';
import { adminOfNewOrg, createMember, createOperator, dashboardForFile, httpSession, refuseAuditRowsOf, signedInOperator, startTestDashboard } from './dashboard-fixtures.js';
import { runCliWithEnv } from './support/run-cli.js';

// Password reset links against the real dashboard and Postgres: an admin (or an operator) makes
// one on the members page, shown once; the person opens it, types a new password twice, and is
// signed in with it, everything the old password opened ended; the link works once, a newer one
// replaces it, and an admin may make one only for an account that opens their organization alone.

// Enough password-check places that no request here is turned away as busy.
const slots = passwordCheckSlots({ running: 1, queued: 40, maxWaitMs: 30_000, perAddress: 40 });
const env = dashboardForFile({ signInLimits: { maxFailures: 5, maxDeviceFailures: 5, windowMs: 15 * 60 * 1000, passwordChecks: slots } });

type Client = ReturnType<typeof httpSession>;
const NEW_PASSWORD = 'a new password, long enough';
const membersPage = (orgId: string) => `/orgs/${orgId}/members`;

/** The members page's reset form for one member, as drawn (its CSRF and submission tokens); undefined when the row has none. */
async function resetFormOf(client: Client, orgId: string, userId: string): Promise<Record<string, string> | undefined> {
  const page = await (await client.get(membersPage(orgId))).text();
  const start = page.indexOf(`action="/orgs/${orgId}/members/${userId}/password-reset"`);
  if (start < 0) return undefined;
  const form = page.slice(start, page.indexOf('</form>', start));
  const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(form)?.[1];
  return { _csrf: hidden('_csrf')!, _submission: hidden('_submission')! };
}

/** Makes a reset link for `userId` on the members page and returns its path, as the admin copies it. */
async function makeLink(client: Client, orgId: string, userId: string): Promise<string> {
  const res = await client.post(`${membersPage(orgId)}/${userId}/password-reset`, (await resetFormOf(client, orgId, userId))!);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(membersPage(orgId));
  const page = await (await client.get(membersPage(orgId))).text();
  return new URL(/<code id="reset-link"[^>]*>([^<]+)<\/code>/.exec(page)![1]!).pathname;
}

async function signedIn(who: { email: string; password: string }): Promise<Client> {
  const client = httpSession(env.dashboard.url);
  expect((await client.signIn(who.email, who.password)).status).toBe(302);
  return client;
}

/** Sends a reset link's form from a browser not signed in (its own, unless given one). */
async function useLink(link: string, newPassword: string, confirmPassword = newPassword, client = httpSession(env.dashboard.url)) {
  // The pre-session CSRF token, which a link that no longer opens has no form to show.
  const res = await client.post(link, { _csrf: await client.csrf('/sign-in'), newPassword, confirmPassword });
  return { res, client };
}

const auditOf = (orgId: string) =>
  env.db('audit_log').where({ organization_id: orgId }).whereIn('action', ['member.password_reset_issued', 'member.password_reset']).orderBy('id')
    .select<{ actor: string; action: string; details: Record<string, unknown> | null }[]>('actor', 'action', 'details');

const passwordHashOf = async (userId: string) => (await env.db('users').where({ id: userId }).first<{ password_hash: string }>('password_hash'))!.password_hash;
const devicesOf = (userId: string) => env.db('trusted_devices').where({ user_id: userId }).pluck<string[]>('id_hash');

describe('when an admin makes a password reset link for a member who forgot theirs', () => {
  it('then it is shown once, the old password works until the link is used, and using it sets the new one, ends every session and trusted browser, signs them in and is logged', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Reset link test');
    const member = await createMember(env.db, orgId, 'finance');
    const before = await signedIn(member);
    const devicesBefore = await devicesOf(member.userId);
    expect(devicesBefore).toHaveLength(1);

    const link = await makeLink(client, orgId, member.userId);
    expect(link).toMatch(/^\/password-reset\/[A-Za-z0-9_-]{43}$/);
    // Shown once: the next visit of the page has no link.
    expect(await (await client.get(membersPage(orgId))).text()).not.toContain('id="reset-link"');
    // Only the secret's hash is kept.
    expect(await env.db('password_resets').where({ user_id: member.userId }).pluck('token_hash')).toEqual([hashToken(link.split('/').pop()!)]);
    // Nothing changes for the member until the link is used.
    expect((await before.get(`/orgs/${orgId}`)).status).toBe(200);
    const alsoBefore = await signedIn(member);

    const form = await (await httpSession(env.dashboard.url).get(link)).text();
    expect(form).toContain(`Choose a new password for ${member.email}.`);
    expect(form).toMatch(/<input id="reset-email" name="email_display" type="email" value="[^"]+" readonly/);
    expect(form).toContain('<label for="new-password">New password</label>');
    expect(form).toContain('<label for="confirm-password">New password, again</label>');
    expect(form).toContain('data-submit-once');

    const { res, client: person } = await useLink(link, NEW_PASSWORD);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/account/password?done=reset');
    expect(await (await person.get('/account/password?done=reset')).text()).toContain('Your new password is set, and you are signed in with it.');
    expect((await person.get(`/orgs/${orgId}`)).status).toBe(200);

    // Every session opened before is over, and every browser trusted before is trusted no more.
    for (const old of [before, alsoBefore]) expect((await old.get(`/orgs/${orgId}`)).status).toBe(302);
    // Ended, not only left unread: the one session the person has now is this browser's.
    expect(await env.db('sessions').where({ user_id: member.userId }).whereNull('revoked_at')).toHaveLength(1);
    const devicesAfter = await devicesOf(member.userId);
    expect(devicesAfter).toHaveLength(1);
    expect(devicesAfter.some((d) => devicesBefore.includes(d))).toBe(false);
    expect(await verifyPassword(NEW_PASSWORD, await passwordHashOf(member.userId))).toBe(true);
    expect((await httpSession(env.dashboard.url).signIn(member.email, member.password)).status).toBe(401);

    expect(await auditOf(orgId)).toEqual([
      { actor: adminId, action: 'member.password_reset_issued', details: { userId: member.userId, email: member.email } },
      { actor: member.userId, action: 'member.password_reset', details: { email: member.email } },
    ]);
    const activity = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(activity).toContain(`Made a password reset link for ${member.email}`);
    expect(activity).toContain(`${member.email} set a new password with a reset link`);
    expect(activity).not.toContain(NEW_PASSWORD);

    // It works once.
    const again = await httpSession(env.dashboard.url).get(link);
    expect(again.status).toBe(404);
    expect(await again.text()).toContain('This password reset link has already been used');
    const reused = await useLink(link, 'yet another password, long');
    expect(reused.res.status).toBe(404);
    expect(await verifyPassword(NEW_PASSWORD, await passwordHashOf(member.userId))).toBe(true);
  });

  it('then the pages say it in Italian, and the activity log too', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Reset link Italian test');
    const member = await createMember(env.db, orgId, 'admin');
    client.jar.set('dash_lang', 'it');
    const res = await client.post(`${membersPage(orgId)}/${member.userId}/password-reset`, (await resetFormOf(client, orgId, member.userId))!);
    const page = await (await client.get(res.headers.get('location')!)).text();
    expect(page).toContain('Link per reimpostare la password');
    expect(page).toContain(`Invia tu questo link a ${member.email} (non viene inviata nessuna e-mail). Funziona una sola volta, fino al `);
    expect(page).toContain('data-confirm="Creare un link per reimpostare la password di');
    const link = new URL(/<code id="reset-link"[^>]*>([^<]+)<\/code>/.exec(page)![1]!).pathname;

    const person = httpSession(env.dashboard.url);
    person.jar.set('dash_lang', 'it');
    const form = await (await person.get(link)).text();
    expect(form).toContain(`Scegli una nuova password per ${member.email}.`);
    expect(form).toContain('<label for="confirm-password">Nuova password, di nuovo</label>');
    const refused = await useLink(link, NEW_PASSWORD, 'something else entirely', person);
    expect(refused.res.status).toBe(422);
    expect(await refused.res.text()).toContain('Controlla il modulo: Nuova password, di nuovo: non corrisponde alla nuova password');
    expect((await useLink(link, NEW_PASSWORD, NEW_PASSWORD, person)).res.status).toBe(303);
    expect(await (await person.get('/account/password?done=reset')).text()).toContain("La nuova password è impostata e hai effettuato l&#39;accesso con quella.");
    expect(await (await person.get(link)).text()).toContain('Questo link per reimpostare la password è già stato usato');

    const activity = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(activity).toContain(`Creato un link per reimpostare la password di ${member.email}`);
    expect(activity).toContain(`${member.email} ha impostato una nuova password con un link di reimpostazione`);
  });

  it('then passwords too short or not typed alike are refused under their fields, neither shown again, and the link still works', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Reset link refused test');
    const member = await createMember(env.db, orgId, 'finance');
    const link = await makeLink(client, orgId, member.userId);
    const short = await useLink(link, 'short');
    expect(short.res.status).toBe(422);
    const shortBody = await short.res.text();
    expect(shortBody).toMatch(/<p class="field-error" id="new-password-error">at least 12 characters<\/p>/);
    expect(shortBody).not.toContain('value="short"');
    const mismatch = await useLink(link, NEW_PASSWORD, `${NEW_PASSWORD}!`);
    expect(mismatch.res.status).toBe(422);
    expect(await mismatch.res.text()).toMatch(/<p class="field-error" id="confirm-password-error">does not match the new password<\/p>/);
    // Left out (a script, an old page): refused the same way.
    const person = httpSession(env.dashboard.url);
    expect((await person.post(link, { _csrf: await person.csrf(link), newPassword: NEW_PASSWORD })).status).toBe(422);
    expect(await verifyPassword(member.password, await passwordHashOf(member.userId))).toBe(true);
    expect((await auditOf(orgId)).map((r) => r.action)).toEqual(['member.password_reset_issued']);
    expect((await useLink(link, NEW_PASSWORD)).res.status).toBe(303);
  });

  it('then sent twice at once (a double-click) it sets the password once and logs it once', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Reset link twice test');
    const member = await createMember(env.db, orgId, 'finance');
    const link = await makeLink(client, orgId, member.userId);
    const person = httpSession(env.dashboard.url);
    const csrf = await person.csrf(link);
    const answers = await Promise.all([NEW_PASSWORD, `${NEW_PASSWORD} two`].map((p) => person.post(link, { _csrf: csrf, newPassword: p, confirmPassword: p })));
    expect(answers.map((a) => a.status).sort()).toEqual([303, 404]);
    expect((await auditOf(orgId)).map((r) => r.action)).toEqual(['member.password_reset_issued', 'member.password_reset']);
  });

  it('then its form sent twice at once (a double-click) makes one link, shown once', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Reset link made twice test');
    const member = await createMember(env.db, orgId, 'finance');
    const form = (await resetFormOf(client, orgId, member.userId))!;
    const answers = await Promise.all([1, 2].map(() => client.post(`${membersPage(orgId)}/${member.userId}/password-reset`, form)));
    expect(answers.map((a) => [a.status, a.headers.get('location')])).toEqual([[303, membersPage(orgId)], [303, membersPage(orgId)]]);
    expect((await auditOf(orgId)).map((r) => r.action)).toEqual(['member.password_reset_issued']);
    const link = new URL(/<code id="reset-link"[^>]*>([^<]+)<\/code>/.exec(await (await client.get(membersPage(orgId))).text())![1]!).pathname;
    expect(await env.db('password_resets').where({ user_id: member.userId }).pluck('token_hash')).toEqual([hashToken(link.split('/').pop()!)]);
    // Sent again seconds after it was shown (the browser may have dropped that page for this
    // answer): the same link, shown again to this session; no second link.
    const repeat = await client.post(`${membersPage(orgId)}/${member.userId}/password-reset`, form);
    expect(repeat.headers.get('location')).toBe(membersPage(orgId));
    expect(/<code id="reset-link"[^>]*>([^<]+)<\/code>/.exec(await (await client.get(membersPage(orgId))).text())?.[1]).toContain(link);
    expect(await env.db('password_resets').where({ user_id: member.userId }).pluck('token_hash')).toEqual([hashToken(link.split('/').pop()!)]);
    expect((await useLink(link, NEW_PASSWORD)).res.status).toBe(303);
  });

  it('then with the e-mail locked by wrong guesses, the new password signs them in at once', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Reset link locked test');
    const member = await createMember(env.db, orgId, 'finance');
    const guesser = httpSession(env.dashboard.url);
    for (let i = 0; i < 5; i++) expect((await guesser.signIn(member.email, `wrong guess ${i}`)).status).toBe(401);
    expect((await guesser.signIn(member.email, member.password)).status).toBe(429);

    const link = await makeLink(client, orgId, member.userId);
    const { res, client: person } = await useLink(link, NEW_PASSWORD);
    expect(res.headers.get('location')).toBe('/account/password?done=reset');
    expect((await person.get(`/orgs/${orgId}`)).status).toBe(200);
  });
});

describe('when a reset link is replaced, expires, or no longer applies', () => {
  it('then a newer link replaces the one before: the older says it is not valid, the newer works', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Reset link replaced test');
    const member = await createMember(env.db, orgId, 'finance');
    const first = await makeLink(client, orgId, member.userId);
    const second = await makeLink(client, orgId, member.userId);
    expect(second).not.toBe(first);
    const old = await httpSession(env.dashboard.url).get(first);
    expect(old.status).toBe(404);
    expect(await old.text()).toContain('This password reset link is not valid: a newer one may have replaced it');
    expect((await useLink(first, NEW_PASSWORD)).res.status).toBe(404);
    expect((await useLink(second, NEW_PASSWORD)).res.status).toBe(303);
    expect(await env.db('password_resets').where({ user_id: member.userId })).toHaveLength(1);
  });

  it('then an expired link says when it expired, and an unknown one that it is not valid, in English and Italian', async () => {
    const { orgId, adminId } = await adminOfNewOrg(env, 'Reset link expired test');
    const member = await createMember(env.db, orgId, 'finance');
    const madeAt = new Date(Date.now() - 25 * 60 * 60 * 1000);
    const { token, expiresAt } = await env.db.transaction((trx) => issuePasswordReset(trx, { organizationId: orgId, userId: member.userId, issuedBy: adminId, issuedAs: 'admin', now: madeAt }));
    const person = httpSession(env.dashboard.url);
    const expired = await person.get(`/password-reset/${token}`);
    expect(expired.status).toBe(404);
    const when = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(expiresAt);
    expect(await expired.text()).toContain(`This password reset link expired on ${when} UTC. Ask an admin of your organization for a new one.`);
    expect((await useLink(`/password-reset/${token}`, NEW_PASSWORD)).res.status).toBe(404);
    expect(await verifyPassword(member.password, await passwordHashOf(member.userId))).toBe(true);

    const unknown = await person.get('/password-reset/not-a-link-we-made');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('This password reset link is not valid');
    person.jar.set('dash_lang', 'it');
    expect(await (await person.get(`/password-reset/${token}`)).text()).toContain('Questo link per reimpostare la password è scaduto il');
    expect(await (await person.get('/password-reset/not-a-link-we-made')).text()).toContain('Questo link per reimpostare la password non è valido');
  });

  it("then an admin's link stops working once the member also joins another organization, is removed, or changes their password", async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Reset link no longer applies test');
    const joins = await createMember(env.db, orgId, 'finance');
    const removed = await createMember(env.db, orgId, 'finance');
    const changes = await createMember(env.db, orgId, 'finance');
    const links = { joins: await makeLink(client, orgId, joins.userId), removed: await makeLink(client, orgId, removed.userId), changes: await makeLink(client, orgId, changes.userId) };

    const other = await createOrganization(env.db, { name: 'Reset link elsewhere', planId: 'standard' });
    await addMembership(env.db, { userId: joins.userId, organizationId: other.id, role: 'admin' });
    const page = membersPage(orgId);
    expect((await client.post(`${page}/${removed.userId}/remove`, { _csrf: await client.csrf(page) })).status).toBe(302);
    const changer = await signedIn(changes);
    const account = await (await changer.get('/account/password')).text();
    const submission = /name="_submission" value="([^"]+)"/.exec(account)![1]!;
    expect((await changer.post('/account/password', { _csrf: await changer.csrf('/account/password'), _submission: submission, currentPassword: changes.password, newPassword: 'remembered it after all', confirmPassword: 'remembered it after all' })).status).toBe(303);

    for (const link of Object.values(links)) {
      const res = await httpSession(env.dashboard.url).get(link);
      expect(res.status, link).toBe(404);
      expect(await res.text()).toContain('This password reset link is not valid');
      expect((await useLink(link, NEW_PASSWORD)).res.status).toBe(404);
    }
    expect(await verifyPassword(joins.password, await passwordHashOf(joins.userId))).toBe(true);
    expect(await verifyPassword(removed.password, await passwordHashOf(removed.userId))).toBe(true);
    expect(await verifyPassword('remembered it after all', await passwordHashOf(changes.userId))).toBe(true);
  });
});

describe('when an admin may not make the link', () => {
  it('then for themselves, an operator, or someone who belongs to another organization too it is refused in the page language, and nothing is made', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Reset link refused kinds test');
    // One's own row has no button: Change password is theirs.
    expect(await resetFormOf(client, orgId, adminId)).toBeUndefined();
    const ownForm = (await resetFormOf(client, orgId, (await createMember(env.db, orgId, 'finance')).userId))!;
    const own = await client.post(`${membersPage(orgId)}/${adminId}/password-reset`, ownForm);
    expect(own.status).toBe(422);
    expect(await own.text()).toContain('Your own password is changed on the Change password page.');

    const operator = await createOperator(env.db);
    const operatorId = (await env.db('users').where({ email: operator.email }).first<{ id: string }>('id'))!.id;
    await addMembership(env.db, { userId: operatorId, organizationId: orgId, role: 'finance' });
    const asOperator = await client.post(`${membersPage(orgId)}/${operatorId}/password-reset`, (await resetFormOf(client, orgId, operatorId))!);
    expect(asOperator.status).toBe(422);
    expect(await asOperator.text()).toContain('This person is an operator: only an operator can make their password reset link.');

    const both = await createMember(env.db, orgId, 'finance');
    const other = await createOrganization(env.db, { name: 'Reset link other organization', planId: 'standard' });
    await addMembership(env.db, { userId: both.userId, organizationId: other.id, role: 'admin' });
    client.jar.set('dash_lang', 'it');
    const elsewhere = await client.post(`${membersPage(orgId)}/${both.userId}/password-reset`, (await resetFormOf(client, orgId, both.userId))!);
    expect(elsewhere.status).toBe(422);
    expect(await elsewhere.text()).toContain('Questa persona fa parte anche di un&#39;altra organizzazione: solo un operatore può creare il suo link per reimpostare la password.');

    // Someone of another organization only: as for the page's other actions, no such member.
    const stranger = await createMember(env.db, other.id, 'finance');
    expect((await client.post(`${membersPage(orgId)}/${stranger.userId}/password-reset`, ownForm)).status).toBe(404);

    expect(await env.db('password_resets').whereIn('user_id', [adminId, operatorId, both.userId, stranger.userId])).toEqual([]);
    expect(await auditOf(orgId)).toEqual([]);
    // Finance manages no members: no link for them to make.
    const finance = await createMember(env.db, orgId, 'finance');
    const financeClient = await signedIn(finance);
    expect((await financeClient.post(`${membersPage(orgId)}/${both.userId}/password-reset`, { _csrf: await financeClient.csrf(`/orgs/${orgId}`) })).status).toBe(403);
  });

  it('then an operator can, from the same members page, and the link is logged in each of the person\'s organizations', async () => {
    const { orgId } = await adminOfNewOrg(env, 'Reset link by operator test');
    const both = await createMember(env.db, orgId, 'admin');
    const other = await createOrganization(env.db, { name: 'Reset link by operator, other', planId: 'standard' });
    await addMembership(env.db, { userId: both.userId, organizationId: other.id, role: 'finance' });
    const operator = await signedInOperator(env);
    const link = await makeLink(operator, orgId, both.userId);
    const { res } = await useLink(link, NEW_PASSWORD);
    expect(res.status).toBe(303);
    for (const id of [orgId, other.id]) expect((await auditOf(id)).map((r) => r.action)).toEqual(['member.password_reset_issued', 'member.password_reset']);
  });

  it('then when the log cannot be written, no link is made; and when its use cannot be logged, the password stays and the link still works', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Reset link audit refused test');
    const member = await createMember(env.db, orgId, 'finance');
    const form = (await resetFormOf(client, orgId, member.userId))!;
    let restore = await refuseAuditRowsOf(env.db, orgId);
    try {
      expect((await client.post(`${membersPage(orgId)}/${member.userId}/password-reset`, form)).status).toBe(500);
    } finally {
      await restore();
    }
    expect(await env.db('password_resets').where({ user_id: member.userId })).toEqual([]);

    const link = await makeLink(client, orgId, member.userId);
    const before = await signedIn(member);
    restore = await refuseAuditRowsOf(env.db, orgId);
    try {
      expect((await useLink(link, NEW_PASSWORD)).res.status).toBe(500);
    } finally {
      await restore();
    }
    expect(await verifyPassword(member.password, await passwordHashOf(member.userId))).toBe(true);
    expect((await before.get(`/orgs/${orgId}`)).status).toBe(200);
    expect((await useLink(link, NEW_PASSWORD)).res.status).toBe(303);
  });
});

describe('when someone forgot their password at the sign-in page', () => {
  it('then the page says to ask an admin of their organization for a reset link, or operators the CLI, in English and Italian', async () => {
    const visitor = httpSession(env.dashboard.url);
    const english = await (await visitor.get('/sign-in')).text();
    expect(english).toContain('Forgot your password? There is no reset by e-mail here: ask an admin of your organization for a password reset link');
    expect(english).toContain('Operators: npm run -s cli -- operator reset-password --email &lt;your e-mail&gt;.');
    visitor.jar.set('dash_lang', 'it');
    const italian = await (await visitor.get('/sign-in')).text();
    expect(italian).toContain('Password dimenticata? Qui non c&#39;è un ripristino via e-mail: chiedi a un amministratore della tua organizzazione un link per reimpostare la password');
  });
});

describe('when an operator makes a reset link with the CLI', () => {
  it("then it prints a link to the dashboard's public address that works once, logged as the CLI's; reset-password still gives operators a password, and points members to reset-link", async () => {
    const { orgId } = await adminOfNewOrg(env, 'Reset link CLI test');
    const member = await createMember(env.db, orgId, 'admin');
    const cli = (...args: string[]) => runCliWithEnv({ DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'error', PUBLIC_DASHBOARD_URL: 'https://dashboard.example.test/', USER: 'ops' }, ...args);

    const run = await cli('operator', 'reset-link', '--email', member.email.toUpperCase());
    expect(run.code, run.stderr).toBe(0);
    const link = run.stdout.trim();
    expect(link).toMatch(/^https:\/\/dashboard\.example\.test\/password-reset\/[A-Za-z0-9_-]{43}$/);
    expect(run.stderr).toContain(`Password reset link for ${member.email}, until `);
    expect(run.stderr).toContain('shown only once');
    expect(await auditOf(orgId)).toEqual([{ actor: 'cli:ops', action: 'member.password_reset_issued', details: { userId: member.userId, email: member.email } }]);
    expect((await useLink(new URL(link).pathname, NEW_PASSWORD)).res.status).toBe(303);
    expect(await (await signedInOperator(env).then((op) => op.get(`/orgs/${orgId}/activity`))).text()).toContain(`Made a password reset link for ${member.email}`);

    expect(await cli('operator', 'reset-link', '--email', 'nobody-at-all@example.test')).toMatchObject({ code: 1, stdout: '', stderr: 'error (not_found): No user with e-mail "nobody-at-all@example.test".\n' });
    const notOperator = await cli('operator', 'reset-password', '--email', member.email);
    expect(notOperator).toMatchObject({ code: 1, stdout: '' });
    expect(notOperator.stderr).toBe(`error (not_found): No operator with e-mail "${member.email}". For a member, \`operator reset-link --email ${member.email}\` prints a password reset link to send them.\n`);
    expect(await verifyPassword(NEW_PASSWORD, await passwordHashOf(member.userId))).toBe(true);

    const operator = await createOperator(env.db);
    const reset = await cli('operator', 'reset-password', '--email', operator.email);
    expect(reset.code, reset.stderr).toBe(0);
    expect((await httpSession(env.dashboard.url).signIn(operator.email, reset.stdout.trim())).status).toBe(302);
  });
});

describe('when the dashboard is behind a proxy with its public address configured', () => {
  it('then the members page link starts with PUBLIC_DASHBOARD_URL', async () => {
    const proxied = await startTestDashboard(env.db, { publicUrl: 'https://dashboard.example.test' });
    try {
      const { orgId, client } = await adminOfNewOrg({ db: env.db, dashboard: proxied }, 'Reset link public address test');
      const member = await createMember(env.db, orgId, 'finance');
      const res = await client.post(`${membersPage(orgId)}/${member.userId}/password-reset`, (await resetFormOf(client, orgId, member.userId))!);
      const page = await (await client.get(res.headers.get('location')!)).text();
      expect(/<code id="reset-link"[^>]*>([^<]+)<\/code>/.exec(page)![1]).toMatch(/^https:\/\/dashboard\.example\.test\/password-reset\/[A-Za-z0-9_-]{43}$/);
    } finally {
      await proxied.close();
    }
  });
});

describe('when every password-check place is taken as the new password is set', () => {
  it('then the password is set all the same, and the page sends them to sign in with it', async () => {
    const busy = passwordCheckSlots({ running: 1, queued: 0, maxWaitMs: 100, perAddress: 1 });
    const crowded = await startTestDashboard(env.db, { signInLimits: { maxFailures: 5, windowMs: 15 * 60 * 1000, passwordChecks: busy } });
    let release = () => {};
    try {
      const org = await createOrganization(env.db, { name: 'Reset link busy test', planId: 'standard' });
      const admin = await createMember(env.db, org.id, 'admin');
      const member = await createMember(env.db, org.id, 'finance');
      const { token } = await env.db.transaction((trx) => issuePasswordReset(trx, { organizationId: org.id, userId: member.userId, issuedBy: admin.userId, issuedAs: 'admin' }));
      // The one place, held by a check that has not finished.
      const held = busy.run(() => new Promise<void>((resolve) => { release = resolve; }));
      const person = httpSession(crowded.url);
      const res = await person.post(`/password-reset/${token}`, { _csrf: await person.csrf('/sign-in'), newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/sign-in?done=reset');
      expect(await (await person.get('/sign-in?done=reset')).text()).toContain('Your new password is set: sign in with it.');
      release();
      await held;
      expect((await person.signIn(member.email, NEW_PASSWORD)).status).toBe(302);
    } finally {
      release();
      await crowded.close();
    }
  });
});
