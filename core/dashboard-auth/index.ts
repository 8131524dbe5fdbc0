export { hashPassword, verifyPassword, MIN_PASSWORD_LENGTH } from './password-hash.js';
export { newSecretToken, hashToken } from './secret-token.js';
export { createSession, readSession, endSession, endAllSessions, SESSION_TTL_MS, type Session, type SessionUser, type CreatedSession } from './session-store.js';
export { signIn, signInEmail, defaultSignInLimits, type SignInLimits, type SignInResult } from './sign-in.js';
export { changePassword, PASSWORD_MISMATCH, type ChangePasswordResult } from './change-password.js';
export { pruneSignInRows, type PrunedSignInRows, type PruneSignInRowsOptions } from './prune-sign-in-rows.js';
export { startSignInPruner, type SignInPruner } from './sign-in-pruner.js';
export { forgetOtherDevices, DEVICE_TRUST_TTL_MS, type TrustedDevice } from './trusted-devices.js';
export { passwordCheckSlots, defaultPasswordCheckBounds, type PasswordCheckSlots, type PasswordCheckBounds } from './password-check-slots.js';
export {
  can, roleIn, membershipsOf, membersOf, addMembership, removeMember, memberRoles,
  type Capability, type MemberRole, type OrganizationRole, type MembershipSummary, type Member,
} from './memberships.js';
export { changeMemberRole, memberRoleChangeSchema, type MemberRoleChange } from './change-member-role.js';
export {
  createInvitation, expiredInvitation, findInvitation, justAcceptedInvitation, acceptInvitation, pendingInvitations, cancelInvitation, invitationInputSchema, invitationIdSchema, INVITATION_TTL_MS, MAX_NAME_LENGTH, ALREADY_MEMBER, NOT_AN_EMAIL,
  type CreatedInvitation, type PendingInvitation, type PendingInvitationSummary, type AcceptInvitationResult, type InvitationInput,
} from './invitations.js';
export { ensureOperator, operatorPasswordWorks, upsertOperator, type OperatorSignIn } from './ensure-operator.js';
export { auditKinds, auditPage, auditSince, isAuditKind, type AuditKind, lastMembershipEvent, recordAudit, recentAudit, withAudit, type AuditChange, type AuditEntry, type AuditPage, type AuditRow, type MembershipEvent } from './audit-log.js';
export { userEmails } from './user-emails.js';
export {
  issuePasswordReset, findPasswordReset, resetPassword, PASSWORD_RESET_TTL_MS, RESET_REFUSED,
  type CreatedPasswordReset, type PasswordResetState, type ResetIssuer, type ResetPasswordResult,
} from './password-resets.js';
