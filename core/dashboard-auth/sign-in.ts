import { createHash } from 'node:crypto';
import type { Db } from '../db/index.js';
import { publicAddressBlock } from '../net/public-address.js';
import type { PasswordCheckSlots } from './password-check-slots.js';
import { verifyPassword } from './password-hash.js';
import { createSession, type CreatedSession } from './session-store.js';
import { forgetDevice, trustDevice, trustedDeviceFor, type TrustedDevice } from './trusted-devices.js';

export interface SignInLimits {
  /**
   * Failed attempts per e-mail, from browsers not trusted for it, allowed inside the window
   * before we stop checking their passwords.
   */
  maxFailures: number;
  windowMs: number;
  /**
   * Wrong passwords a browser trusted for the e-mail may send, with no success in between,
   * before it is trusted no more (then the e-mail's lock applies to it too); default `maxFailures`.
   */
  maxDeviceFailures?: number;
  /**
   * Failed attempts from one public client address, from browsers not trusted for the e-mail
   * tried, allowed inside the window whatever the e-mails (default 30): the e-mail's own lock
   * bounds guesses at one account, this bounds one address trying a password at many (password
   * spraying). IPv6 addresses are counted by their /64, which one client holds whole. Only
   * public addresses are counted: a private, loopback or link-local one is most
   * likely a proxy in front of everyone (TRUST_PROXY unset), and locking it would lock out every
   * browser not trusted yet.
   */
  maxAddressFailures?: number;
  /**
   * The process's password-check slots, when not the ones the dashboard makes for itself from
   * the machine's cores (tests choose their own bounds, and read `peakRunning`).
   */
  passwordChecks?: PasswordCheckSlots;
}

export const defaultSignInLimits: SignInLimits = { maxFailures: 5, maxDeviceFailures: 5, maxAddressFailures: 30, windowMs: 15 * 60 * 1000 };

/**
 * The oldest attempt the e-mail's lock reads: its failures and its last success count only
 * inside the window. Attempts from trusted browsers are read by another rule (their budget,
 * for as long as their browser stays trusted): see prune-sign-in-rows.ts.
 */
export function lockWindowStart(now: Date, limits: SignInLimits): Date {
  return new Date(now.getTime() - limits.windowMs);
}

/** The form of an e-mail that sign-in counts, locks and trusts browsers by. */
export function signInEmail(email: string): string {
  return email.trim().toLowerCase();
}

export type PasswordRefusal =
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number }
  /** Too many failures from this client address (password spraying), whatever the e-mail. */
  | { ok: false; reason: 'addressLocked'; retryAfterSeconds: number }
  | { ok: false; reason: 'busy'; retryAfterSeconds: number };

export type SignInResult = { ok: true; userId: string; email: string; session: CreatedSession; device: TrustedDevice } | PasswordRefusal;

/** A password that proved right: whose it is, and the trusted browser it came from, if any. */
export interface ProvenPassword {
  ok: true;
  userId: string;
  email: string;
  passwordHash: string;
  /** The stored id of the trusted browser the attempt came from (it is trusted afresh). */
  device: string | null;
}

export interface PasswordAttempt {
  email: string;
  password: string;
  ip: string | null;
  /** The secret this browser's device cookie holds for this e-mail, if any. */
  device?: string | null;
  now?: Date;
  limits?: SignInLimits;
  passwordChecks: PasswordCheckSlots;
}

// The first key of our two-key advisory locks on sign-in e-mails ('SIGN'); the migration lock
// takes a one-key (bigint) lock, which Postgres keeps apart from every two-key one.
const SIGN_IN_LOCK_SPACE = 0x5349474e;
// And on client addresses ('SIGA').
const SIGN_IN_ADDRESS_LOCK_SPACE = 0x53494741;

/** A 32-bit lock key of the normalised e-mail: two e-mails that share one only take turns. */
function emailLockKey(email: string): number {
  return createHash('sha256').update(email).digest().readInt32BE(0);
}

/** The same for a client address (its own lock space): taken before the e-mail's, always. */
function addressLockKey(address: string): number {
  return createHash('sha256').update(address).digest().readInt32BE(0);
}

/** When the oldest of the last `max` failures leaves the window, in whole seconds (at least 1). */
function secondsUntilOneLeaves(failures: { at: Date }[], max: number, limits: SignInLimits, now: Date): number {
  const oldestCounted = failures[failures.length - max]!.at;
  return Math.max(1, Math.ceil((oldestCounted.getTime() + limits.windowMs - now.getTime()) / 1000));
}

/**
 * E-mail + password. Failures are counted per e-mail (any IP) since the last success: past the
 * limit we answer "locked" without running the password check, so guessing is bounded no matter
 * how many addresses the guesser uses. Unknown e-mails are counted and timed like known ones.
 *
 * That lock is for browsers not trusted for the e-mail. One that presents the secret it was
 * given when it last signed in as this e-mail (`device`: the browser's device cookie; see
 * trusted-devices.ts) is counted on a budget of its own instead: whoever locks an e-mail from
 * elsewhere does not lock its owner out of the browsers they use. Its wrong passwords do not
 * lock the e-mail for others either, and once it has sent `maxDeviceFailures` of them without a
 * success it is trusted no more, so a stolen cookie buys a few guesses, once. The e-mail's lock
 * counts only attempts from untrusted browsers, since the last success of one: a success from a
 * trusted browser gives the guesser no fresh window.
 *
 * The counts and the attempt's own row are one transaction under a lock on the e-mail, and the
 * row says "failed" until the password has proved right: however many guesses arrive at once,
 * each sees those before it, so at most `maxFailures` passwords from untrusted browsers are
 * checked per window, and at most `maxDeviceFailures` wrong ones from each trusted browser.
 * The check itself runs outside the transaction, in one of the process's password-check slots;
 * with none free soon enough (or this client address holding its share) the answer is "busy"
 * and the attempt is forgotten.
 *
 * A success trusts the browser afresh (`device` in the result goes in its cookie), replacing
 * the secret it presented.
 */
export async function signIn(db: Db, input: PasswordAttempt): Promise<SignInResult> {
  const now = input.now ?? new Date();
  const proven = await checkPasswordAttempt(db, { ...input, now });
  if (!proven.ok) return proven;
  const device = await trustDevice(db, { userId: proven.userId, passwordHash: proven.passwordHash, replacing: proven.device, now });
  return { ok: true, userId: proven.userId, email: proven.email, session: await createSession(db, { userId: proven.userId, passwordHash: proven.passwordHash, now }), device };
}

/**
 * The password check of a sign-in, with its counting and locks (above), and nothing after it:
 * no session, no browser trusted. Changing one's password checks the current one through here,
 * so a session left open in someone else's hands buys no more guesses than the sign-in form.
 */
export async function checkPasswordAttempt(db: Db, input: PasswordAttempt): Promise<ProvenPassword | PasswordRefusal> {
  const now = input.now ?? new Date();
  const limits = input.limits ?? defaultSignInLimits;
  const maxDeviceFailures = limits.maxDeviceFailures ?? limits.maxFailures;
  const slots = input.passwordChecks;
  const email = signInEmail(input.email);
  const since = lockWindowStart(now, limits);
  const busy = { ok: false, reason: 'busy', retryAfterSeconds: slots.retryAfterSeconds } as const;
  const maxAddressFailures = limits.maxAddressFailures ?? defaultSignInLimits.maxAddressFailures!;
  // IPv6 clients by their /64: each holds one at least and may use any address in it.
  const countedAddress = input.ip === null ? null : publicAddressBlock(input.ip);
  // The client whose share of the password-check queue this takes: its block, as above.
  const client = countedAddress ?? input.ip;
  // A full queue turns a flood away before it costs the database anything.
  if (!slots.hasRoom(client)) return busy;

  const attempt = await db.transaction(async (trx) => {
    // The address's lock before the e-mail's, in every attempt: no two wait on each other.
    if (countedAddress) await trx.raw('SELECT pg_advisory_xact_lock(?::int, ?::int)', [SIGN_IN_ADDRESS_LOCK_SPACE, addressLockKey(countedAddress)]);
    await trx.raw('SELECT pg_advisory_xact_lock(?::int, ?::int)', [SIGN_IN_LOCK_SPACE, emailLockKey(email)]);
    const device = input.device ? await trustedDeviceFor(trx, input.device, email, now) : undefined;
    if (device) {
      // Its failures since it was last trusted: each success trusts it again under a new id.
      const [spent] = await trx('sign_in_attempts').where({ device_id_hash: device, succeeded: false }).count<{ count: string }[]>({ count: '*' });
      if (Number(spent!.count) < maxDeviceFailures) {
        const [row] = (await trx('sign_in_attempts').insert({ email, ip: input.ip, address_block: countedAddress, succeeded: false, at: now, device_id_hash: device }).returning('id')) as { id: string }[];
        return { locked: false, id: row!.id, device } as const;
      }
      // Its budget spent: from now on, one more browser the e-mail's lock applies to.
      await forgetDevice(trx, device);
    }
    if (countedAddress) {
      // Failures, not successes, are what spraying leaves: a success does not reset this count
      // (one right password among many wrong ones would reopen the window otherwise).
      const fromAddress = await trx('sign_in_attempts')
        .where({ address_block: countedAddress, succeeded: false })
        .whereNull('device_id_hash')
        .andWhere('at', '>', since)
        .orderBy('at', 'asc')
        .select<{ at: Date }[]>('at');
      if (fromAddress.length >= maxAddressFailures) {
        return { locked: 'address', retryAfterSeconds: secondsUntilOneLeaves(fromAddress, maxAddressFailures, limits, now) } as const;
      }
    }
    const untrusted = () => trx('sign_in_attempts').whereRaw('lower(email) = ?', [email]).whereNull('device_id_hash');
    const lastSuccess = await untrusted().andWhere({ succeeded: true }).max<{ at: Date | null }>({ at: 'at' }).first();
    const from = lastSuccess?.at && lastSuccess.at > since ? lastSuccess.at : since;
    const failures = await untrusted()
      .andWhere({ succeeded: false })
      .andWhere('at', '>', from)
      .orderBy('at', 'asc')
      .select<{ at: Date }[]>('at');
    if (failures.length >= limits.maxFailures) {
      return { locked: 'email', retryAfterSeconds: secondsUntilOneLeaves(failures, limits.maxFailures, limits, now) } as const;
    }
    const [row] = (await trx('sign_in_attempts').insert({ email, ip: input.ip, address_block: countedAddress, succeeded: false, at: now }).returning('id')) as { id: string }[];
    return { locked: false, id: row!.id, device: null } as const;
  });
  if (attempt.locked) return { ok: false, reason: attempt.locked === 'email' ? 'locked' : 'addressLocked', retryAfterSeconds: attempt.retryAfterSeconds };

  const user = await db('users').whereRaw('lower(email) = ?', [email]).whereNull('disabled_at').first<{ id: string; password_hash: string | null } | undefined>('id', 'password_hash');
  const checked = await slots.run(() => verifyPassword(input.password, user?.password_hash ?? null), client);
  if (!checked.ran) {
    // No password was checked: the attempt counts for nothing.
    await db('sign_in_attempts').where({ id: attempt.id }).delete();
    return busy;
  }
  if (!checked.value || !user?.password_hash) return { ok: false, reason: 'invalid' };
  await db('sign_in_attempts').where({ id: attempt.id }).update({ succeeded: true });
  return { ok: true, userId: user.id, email, passwordHash: user.password_hash, device: attempt.device };
}
