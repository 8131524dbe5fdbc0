import type { Router } from '@koa/router';
import { z } from 'zod';
import { can, cancelInvitation, changeMemberRole, createInvitation, invitationIdSchema, invitationInputSchema, issuePasswordReset, lastMembershipEvent, memberRoles, membersOf, pendingInvitations, removeMember, withAudit, type CreatedInvitation, type Member, type MemberRole } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { AppError, parseInput } from '../../core/errors/index.js';
import { orgAccess, type OrgView } from '../org-access.js';
import { answerRepeated, claimSubmission, submissionField, submissionOf } from '../form-submission.js';
import { putFlash, takeFlash } from '../session-flash.js';
import type { DashboardContext, DashboardState } from '../state.js';
import { badge, copyButton, csrfField, field, fieldAttributes, fieldError, notice, postButton, section, select, table } from '../views/components.js';
import { html, raw, type Html, type HtmlValue } from '../views/html.js';
import { fieldRefusals, invalidInputMessage, MEMBER_ROLE_REFUSED } from '../views/invalid-input.js';
import { page } from '../views/layout.js';

export interface MembersRouteDeps {
  db: Db;
  /** The dashboard's configured public address (PUBLIC_DASHBOARD_URL), for invitation links. */
  publicUrl?: string;
}

/**
 * An absolute link to one of the dashboard's pages (an invitation's, a password reset's). Not
 * from `ctx.origin`: in Koa 3 that is the request's Origin header, absent from curl and some
 * proxies (the link read `null/invitations/…`) and chosen by the client. The configured public
 * address when there is one; else the address this request reached (Host, or X-Forwarded-* when
 * the dashboard trusts its proxy).
 */
function dashboardLink(ctx: DashboardContext, path: string, publicUrl?: string): string {
  const base = publicUrl ? publicUrl.replace(/\/+$/, '') : `${ctx.protocol}://${ctx.host}`;
  return `${base}${path}`;
}

export function invitationLink(ctx: DashboardContext, token: string, publicUrl?: string): string {
  return dashboardLink(ctx, `/invitations/${token}`, publicUrl);
}

export function invitationPanel(ctx: DashboardContext, invitation: CreatedInvitation, options: { publicUrl?: string } = {}): Html {
  const { t, f } = ctx.state;
  return html`<section class="card card-highlight" aria-labelledby="invite-link-title">
    <h2 id="invite-link-title">${t('members.invite')}</h2>
    <p>${t('members.inviteLink', { email: invitation.email, date: f.date(invitation.expiresAt) })}</p>
    <div class="secret-row">
      <code id="invite-link" class="secret" tabindex="0">${invitationLink(ctx, invitation.token, options.publicUrl)}</code>
      ${copyButton(ctx.state, 'invite-link')}
    </div>
  </section>`;
}

/** A new password reset link, shown once above the members (as an invitation's is). */
function passwordResetPanel(ctx: DashboardContext, reset: PasswordResetFlash, publicUrl?: string): Html {
  const { t, f } = ctx.state;
  return html`<section class="card card-highlight" aria-labelledby="reset-link-title">
    <h2 id="reset-link-title">${t('members.resetTitle')}</h2>
    <p>${t('members.resetLink', { email: reset.email, time: f.dateTime(reset.expiresAt) })}</p>
    <div class="secret-row">
      <code id="reset-link" class="secret" tabindex="0">${dashboardLink(ctx, `/password-reset/${reset.token}`, publicUrl)}</code>
      <button type="button" class="btn btn-primary" data-copy="reset-link" data-copied="${t('common.copied')}">${t('common.copy')}</button>
    </div>
  </section>`;
}

/** The invitation form; refused, it comes back with the e-mail and role as typed, and why. */
export function inviteForm(state: DashboardState, action: string, options: {
  roles: ('admin' | 'finance')[];
  /** The role chosen until another is: the least a newcomer needs, unless the form is for an admin. */
  defaultRole?: 'admin' | 'finance';
  title: string;
  typed?: Partial<Record<string, string>>;
  refusals?: Partial<Record<string, string>>;
}): Html {
  const { t } = state;
  const typedRole = options.roles.find((r) => r === options.typed?.role);
  return section(options.title, html`<form method="post" action="${action}" class="form-row">
    ${csrfField(state)}${submissionField()}
    ${field({ label: t('members.email'), name: 'email', type: 'email', required: true, autocomplete: 'off', id: 'invite-email', value: options.typed?.email ?? null, error: options.refusals?.email })}
    ${options.roles.length > 1
      ? select({ label: t('members.role'), name: 'role', choices: options.roles.map((r) => ({ value: r, label: t(`role.${r}`) })), value: typedRole ?? options.defaultRole ?? options.roles[0]!, id: 'invite-role', help: t('members.roleHelp'), error: options.refusals?.role })
      : html`<input type="hidden" name="role" value="${options.roles[0]!}">`}
    <div class="field field-button"><button type="submit" class="btn btn-primary">${t('members.inviteButton')}</button></div>
  </form>`, { id: 'invite' });
}

// A new invitation waits in the session for the page its form redirects to (the members page,
// or the operator's organization page) to show its link once (see session-flash.ts).
export const invitationFlashSchema = z.object({
  token: z.string(),
  email: z.string(),
  role: z.enum(memberRoles as [MemberRole, ...MemberRole[]]),
  expiresAt: z.coerce.date(),
}) satisfies z.ZodType<CreatedInvitation, unknown>;

// A password reset link waits for the members page the same way, under the same path: the page
// shows whichever its form made.
const passwordResetFlashSchema = z.object({ kind: z.literal('password_reset'), token: z.string(), email: z.string(), expiresAt: z.coerce.date() });
type PasswordResetFlash = z.output<typeof passwordResetFlashSchema>;
const membersFlashSchema = z.union([passwordResetFlashSchema, invitationFlashSchema]);

const membersPath = (orgId: string) => `/orgs/${orgId}/members`;

// The members forms' role: only the roles they offer, refused in our words under the field (a
// hand-made request sends another; zod's "Invalid option: expected one of …" named no field).
// The invitation's e-mail is core's rule, checked here too so both fields are refused at once;
// core checks both again.
const roleField = z.enum(memberRoles as [MemberRole, ...MemberRole[]], MEMBER_ROLE_REFUSED);
const roleFormSchema = z.object({ role: roleField });
const inviteFormSchema = z.object({ email: invitationInputSchema.shape.email, role: roleField.default('finance') });

/** A member's role form: the roles, theirs chosen, and a button; one's own asks first. `error`: why the role sent was refused. */
function roleForm(state: DashboardState, orgId: string, member: Member, own: boolean, error?: string): Html {
  const { t } = state;
  const id = `role-${member.userId}`;
  return html`<form method="post" action="/orgs/${orgId}/members/${member.userId}/role" class="inline"${own ? html` data-confirm="${t('members.changeOwnRoleConfirm')}"` : ''}>
    ${csrfField(state)}
    <label class="visually-hidden" for="${id}">${t('members.roleOf', { email: member.email })}</label>
    <select id="${id}" name="role"${fieldAttributes(id, { error })}>${memberRoles.map((r) => html`<option value="${r}"${r === member.role ? raw(' selected') : ''}>${t(`role.${r}`)}</option>`)}</select>
    <button type="submit" class="btn btn-secondary">${t('members.changeRole')}</button>
    ${fieldError(id, error)}
  </form>`;
}

/**
 * "Reset password" for another member who has joined (one's own is Change password; someone
 * not yet joined sets one with their invitation). One submission, one link: a double-click
 * makes one, and its answer shows it.
 */
function resetForm(state: DashboardState, orgId: string, member: Member): Html {
  const { t } = state;
  return html`<form method="post" action="/orgs/${orgId}/members/${member.userId}/password-reset" class="inline" data-confirm="${t('members.resetConfirm', { email: member.email })}">
    ${csrfField(state)}${submissionField()}
    <button type="submit" class="btn btn-secondary">${t('members.reset')}</button>
  </form>`;
}

// What the page says after a role change (Post/Redirect/Get): the member's role as it is now.
const roleNotice = { role: 'members.roleChanged', role_unchanged: 'members.roleUnchanged' } as const;

// An action sent from a page drawn before the member was removed (another tab, a double submit):
// core finds no such member, which the gate would answer 404 ("or you do not have access"). When
// this organization's log says the person was removed from it (a fact its admins read on the
// Activity page), the page says so instead; anyone else (another organization's member, an
// unknown id) is still the 404 it was. answeredRemoved answers so (303 to the members page,
// `already_removed` for a Remove, `not_member` for anything else) and returns true; otherwise it
// returns false, and the caller goes on with the error.
async function answeredRemoved(ctx: DashboardContext, db: Db, organizationId: string, err: unknown, done: 'already_removed' | 'not_member'): Promise<boolean> {
  if (!(err instanceof AppError && err.code === 'not_found')) return false;
  const userId = ctx.params.userId!;
  if ((await lastMembershipEvent(db, organizationId, userId))?.action !== 'member.removed') return false;
  ctx.redirect(`${membersPath(organizationId)}?done=${done}&member=${encodeURIComponent(userId)}`);
  ctx.status = 303;
  return true;
}

// What the page says of a cancel sent for an invitation that is no longer open, by what its row
// says now (a cancelled or closed invitation's row is deleted).
async function closedInvitationNotice(state: DashboardState, db: Db, organizationId: string, invitationId: unknown): Promise<string> {
  const { t } = state;
  const row = typeof invitationId === 'string' && invitationIdSchema.safeParse(invitationId).success
    ? await db('invitations').where({ token_hash: invitationId, organization_id: organizationId }).first<{ email: string; accepted_at: Date | null } | undefined>('email', 'accepted_at')
    : undefined;
  if (!row) return t('members.invitationAlreadyClosed');
  return t(row.accepted_at ? 'members.invitationAlreadyAccepted' : 'members.invitationAlreadyExpired', { email: row.email });
}

/** A refused form of the members page: the invitation form's (as typed), or a member's role form (`member`: whose row). */
interface RefusedMembersForm {
  typed: Partial<Record<string, string>>;
  error: AppError;
  member?: string;
}

async function renderMembers(ctx: DashboardContext, db: Db, view: OrgView, top?: HtmlValue | ((members: Member[]) => HtmlValue), refused?: RefusedMembersForm): Promise<void> {
  const { t, f } = ctx.state;
  const [members, invitations] = await Promise.all([membersOf(db, view.org.id), pendingInvitations(db, view.org.id)]);
  const me = ctx.state.session!.user.id;
  const body = html`
    ${(typeof top === 'function' ? top(members) : top) ?? ''}
    ${refused ? notice(t('error.invalid', { message: invalidInputMessage(ctx.state, refused.error) }), 'bad') : ''}
    ${inviteForm(ctx.state, `/orgs/${view.org.id}/members/invite`, { roles: ['admin', 'finance'], defaultRole: 'finance', title: t('members.invite'), typed: refused?.member ? undefined : refused?.typed, refusals: refused && !refused.member ? fieldRefusals(ctx.state, refused.error) : undefined })}
    ${section(t('members.title'), table({
      caption: t('members.title'),
      headers: [t('members.email'), t('common.name'), t('members.role'), t('members.since'), t('common.actions')],
      rows: members.map((m) => [
        html`${m.email}${m.active ? '' : html` ${badge(t('members.pending'), 'warn')}`}`,
        m.name ?? '—',
        badge(t(`role.${m.role}`), 'info'),
        f.date(m.since),
        html`${roleForm(ctx.state, view.org.id, m, m.userId === me, refused?.member === m.userId ? fieldRefusals(ctx.state, refused.error).role : undefined)}
          ${m.userId === me || !m.active ? '' : resetForm(ctx.state, view.org.id, m)}
          ${m.userId === me ? '' : postButton(ctx.state, `/orgs/${view.org.id}/members/${m.userId}/remove`, t('common.remove'), { tone: 'danger', confirm: `${t('common.remove')} ${m.email}?` })}`,
      ]),
      empty: t('common.noRows'),
    }), { id: 'members-list' })}
    ${invitations.length > 0 ? section(t('members.invitations'), table({
      caption: t('members.invitations'),
      headers: [t('members.email'), t('members.role'), t('common.created'), t('keys.expires'), t('common.actions')],
      rows: invitations.map((i) => [
        i.email,
        t(`role.${i.role}`),
        f.dateTime(i.createdAt),
        f.dateTime(i.expiresAt),
        postButton(ctx.state, `/orgs/${view.org.id}/invitations/${i.id}/cancel`, t('members.cancelInvitation'), { tone: 'danger', confirm: `${t('members.cancelInvitation')}: ${i.email}?` }),
      ]),
      empty: '',
    }), { id: 'open-invitations' }) : ''}`;
  // After a form's POST too, the language switch comes back to the members page.
  ctx.body = page(ctx.state, { title: t('members.title'), body, org: view.org, active: 'members', memberships: view.memberships, banners: view.banners, path: `/orgs/${view.org.id}/members` });
}

export function registerMembersRoutes(router: Router<DashboardState>, deps: MembersRouteDeps): void {
  const { db } = deps;
  const done = { cancelled: 'members.invitationCancelled', repeated: 'form.repeated' } as const;

  router.get('/orgs/:orgId/members', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_members');
    const made = await takeFlash(db, ctx.state.sessionToken!, membersPath(view.org.id), membersFlashSchema);
    if (made && 'kind' in made) return renderMembers(ctx, db, view, passwordResetPanel(ctx, made, deps.publicUrl));
    if (made) return renderMembers(ctx, db, view, invitationPanel(ctx, made, { publicUrl: deps.publicUrl }));
    if (ctx.query.done === 'role' || ctx.query.done === 'role_unchanged') {
      const said = roleNotice[ctx.query.done];
      const userId = ctx.query.member;
      return renderMembers(ctx, db, view, (members) => {
        const m = members.find((x) => x.userId === userId);
        return m ? notice(ctx.state.t(said, { email: m.email, role: ctx.state.t(`role.${m.role}`) }), said === 'members.roleChanged' ? 'good' : 'info') : '';
      });
    }
    if (ctx.query.done === 'removed') {
      // Whom, as this organization's log names them: the address cannot be put in the link, nor
      // read from any other organization's.
      const removed = typeof ctx.query.member === 'string' ? await lastMembershipEvent(db, view.org.id, ctx.query.member) : undefined;
      const said = removed?.action === 'member.removed' && removed.email ? ctx.state.t('members.removedEmail', { email: removed.email }) : ctx.state.t('members.removed');
      return renderMembers(ctx, db, view, notice(said, 'good'));
    }
    if (ctx.query.done === 'already_removed' || ctx.query.done === 'not_member') {
      // Whom, and since when, as this organization's log says (as for a removal just made).
      const removed = typeof ctx.query.member === 'string' ? await lastMembershipEvent(db, view.org.id, ctx.query.member) : undefined;
      const repeat = ctx.query.done === 'already_removed';
      const said = removed?.action === 'member.removed' && removed.email
        ? ctx.state.t(repeat ? 'members.alreadyRemoved' : 'members.noLongerMember', { email: removed.email, date: ctx.state.f.date(removed.at) })
        : ctx.state.t(repeat ? 'members.alreadyRemovedSomeone' : 'members.noLongerMemberSomeone');
      return renderMembers(ctx, db, view, notice(said, 'info'));
    }
    if (ctx.query.done === 'invitation_closed') return renderMembers(ctx, db, view, notice(await closedInvitationNotice(ctx.state, db, view.org.id, ctx.query.invitation), 'info'));
    const key = ctx.query.done === 'cancelled' || ctx.query.done === 'repeated' ? done[ctx.query.done] : undefined;
    await renderMembers(ctx, db, view, key ? notice(ctx.state.t(key), key === 'form.repeated' ? 'info' : 'good') : undefined);
  });

  router.post('/orgs/:orgId/members/invite', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_members');
    const user = ctx.state.session!.user;
    try {
      const form = parseInput(inviteFormSchema, { email: ctx.state.form.email ?? '', role: ctx.state.form.role });
      const invitation = await withAudit(
        db,
        async (trx) => {
          if (!(await claimSubmission(trx, ctx))) return null; // sent before (a double-click): no second invitation
          const i = await createInvitation(trx, { organizationId: view.org.id, ...form, invitedBy: user.id });
          // 303 to the members page, which shows the link once: a reload there invites no one
          // again. Kept in this transaction, so that a repeat of the form finds it waiting.
          await putFlash(trx, ctx.state.sessionToken!, membersPath(view.org.id), i, submissionOf(ctx));
          return i;
        },
        (i) => i && { organizationId: view.org.id, actor: user.id, action: 'member.invited', details: { email: i.email, role: i.role } },
      );
      if (!invitation) return await answerRepeated(db, ctx, membersPath(view.org.id));
      ctx.redirect(membersPath(view.org.id));
      ctx.status = 303;
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'invalid_params')) throw err;
      ctx.status = 422;
      // The form comes back as typed, with what to change.
      await renderMembers(ctx, db, view, undefined, { typed: { email: ctx.state.form.email, role: ctx.state.form.role }, error: err });
    }
  });

  router.post('/orgs/:orgId/members/:userId/remove', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_members');
    try {
      // The address and role they had, in the row: once removed, the members page no longer
      // lists them, and the log would name them by an id nobody reads.
      await withAudit(
        db,
        (trx) => removeMember(trx, { organizationId: view.org.id, userId: ctx.params.userId! }),
        (removed) => ({ organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'member.removed', details: { userId: ctx.params.userId, email: removed.email, role: removed.role } }),
      );
    } catch (err) {
      if (await answeredRemoved(ctx, db, view.org.id, err, 'already_removed')) return;
      // removeMember's only invalid_params: the organization's last admin, whoever asks (the
      // button is hidden only for oneself). Said in the page's language, on the members page.
      if (!(err instanceof AppError && err.code === 'invalid_params')) throw err;
      ctx.status = 422;
      await renderMembers(ctx, db, view, notice(ctx.state.t('members.lastAdmin'), 'bad'));
      return;
    }
    ctx.redirect(`${membersPath(view.org.id)}?done=removed&member=${encodeURIComponent(ctx.params.userId!)}`);
  });

  router.post('/orgs/:orgId/members/:userId/password-reset', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_members');
    const actor = ctx.state.session!.user;
    let reset;
    try {
      reset = await db.transaction(async (trx) => {
        if (!(await claimSubmission(trx, ctx))) return null; // sent before (a double-click): no second link
        const r = await issuePasswordReset(trx, { organizationId: view.org.id, userId: ctx.params.userId!, issuedBy: actor.id, issuedAs: view.org.role === 'operator' ? 'operator' : 'admin' });
        // 303 to the members page, which shows the link once (see the invitation form).
        await putFlash(trx, ctx.state.sessionToken!, membersPath(view.org.id), { kind: 'password_reset', token: r.token, email: r.email, expiresAt: r.expiresAt } satisfies PasswordResetFlash, submissionOf(ctx));
        return r;
      });
    } catch (err) {
      if (await answeredRemoved(ctx, db, view.org.id, err, 'not_member')) return;
      // issuePasswordReset's refusals (oneself, an operator, a member of another organization
      // too), said in the page's language on the members page.
      if (!(err instanceof AppError && err.code === 'invalid_params')) throw err;
      ctx.status = 422;
      const said = fieldRefusals(ctx.state, err).userId ?? err.message;
      await renderMembers(ctx, db, view, notice(said, 'bad'));
      return;
    }
    if (!reset) return answerRepeated(db, ctx, membersPath(view.org.id));
    ctx.redirect(membersPath(view.org.id));
    ctx.status = 303;
  });

  router.post('/orgs/:orgId/members/:userId/role', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_members');
    const actor = ctx.state.session!.user;
    let change;
    try {
      const { role } = parseInput(roleFormSchema, { role: ctx.state.form.role });
      change = await withAudit(
        db,
        (trx) => changeMemberRole(trx, { organizationId: view.org.id, userId: ctx.params.userId!, role }),
        // The same role again (a double submit, two admins at once) changed nothing: no row.
        (c) => c.from === c.to ? null : { organizationId: view.org.id, actor: actor.id, action: 'member.role_changed', details: { userId: c.userId, email: c.email, from: c.from, to: c.to } },
      );
    } catch (err) {
      if (await answeredRemoved(ctx, db, view.org.id, err, 'not_member')) return;
      if (!(err instanceof AppError && err.code === 'invalid_params')) throw err;
      ctx.status = 422;
      const lastAdmin = err.details?.some((d) => d.path === 'userId');
      const { t } = ctx.state;
      // A role refused: under the member's role list, as typed, and in the summary above.
      if (lastAdmin) await renderMembers(ctx, db, view, notice(t('members.lastAdminRole'), 'bad'));
      else await renderMembers(ctx, db, view, undefined, { typed: { role: ctx.state.form.role }, error: err, member: ctx.params.userId! });
      return;
    }
    // An admin who made themselves finance may no longer open the members page: they land on the
    // organization's overview, which finance reads.
    const ownAccessLost = change.userId === actor.id && !can(change.to, 'manage_members');
    ctx.redirect(ownAccessLost ? `/orgs/${view.org.id}` : `${membersPath(view.org.id)}?done=${change.from === change.to ? 'role_unchanged' : 'role'}&member=${encodeURIComponent(change.userId)}`);
    ctx.status = 303;
  });

  router.post('/orgs/:orgId/invitations/:invitationId/cancel', async (ctx) => {
    const view = await orgAccess(ctx, db, ctx.params.orgId!, 'manage_members');
    const invitationId = ctx.params.invitationId!;
    try {
      await withAudit(
        db,
        (trx) => cancelInvitation(trx, { organizationId: view.org.id, invitationId }),
        (i) => ({ organizationId: view.org.id, actor: ctx.state.session!.user.id, action: 'member.invitation_cancelled', details: { email: i.email, role: i.role } }),
      );
    } catch (err) {
      // Sent again from a page drawn before (another tab, a double submit), or after the link
      // was used or expired: the members page says the invitation is no longer open. An id that
      // is not one, or another organization's invitation, is still the 404 it was.
      if (!(err instanceof AppError && err.code === 'not_found') || !invitationIdSchema.safeParse(invitationId).success) throw err;
      if (await db('invitations').where({ token_hash: invitationId }).whereNot({ organization_id: view.org.id }).first('token_hash')) throw err;
      ctx.redirect(`${membersPath(view.org.id)}?${new URLSearchParams({ done: 'invitation_closed', invitation: invitationId })}`);
      ctx.status = 303;
      return;
    }
    ctx.redirect(`/orgs/${view.org.id}/members?done=cancelled`);
  });
}
