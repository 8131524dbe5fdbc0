import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { hashToken } from '../core/dashboard-auth/index.js';
import type { Db } from '../core/db/index.js';
import { peekFlash, putFlash, showAgainForRepeat } from './session-flash.js';
import type { DashboardContext } from './state.js';
import { html, type Html } from './views/html.js';

// A form that makes something (a key, a rotation, an invitation) carries a one-time submission
// token, drawn at random each time the page is drawn. The session accepts a token once: a
// double-click sends the form twice, and the second POST makes nothing. Not a CSRF defence (the
// `_csrf` field stays that): only the session's own browser can send a token to it.
//
// Nothing is stored when a page is drawn; the session keeps the tokens it has used, the newest
// USED_KEPT of them, so the list stays small however long the session lives (a repeat comes
// within seconds, not after dozens of other submissions).

const FIELD = '_submission';
const USED_KEPT = 32;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,64}$/;

export function submissionField(): Html {
  return html`<input type="hidden" name="${FIELD}" value="${randomBytes(16).toString('base64url')}">`;
}

/**
 * Records this POST's submission token as used, in the transaction that makes the thing: true
 * when the thing is to be made, false when this token was used already. A second POST with the
 * same token waits on the session's row until the first commits (or rolls back, freeing the
 * token), so it never answers before the first one's result (and its flash) are stored.
 *
 * A form without a token (a page drawn before tokens existed, or a script) is made as before.
 */
export async function claimSubmission(trx: Db, ctx: DashboardContext): Promise<boolean> {
  const token = ctx.state.form[FIELD];
  if (token === undefined) return true;
  // Only a tampered form sends one of another shape; it is not stored.
  if (!TOKEN_SHAPE.test(token)) ctx.throw(400, 'This form is damaged: reload the page and send it again.');
  const used = (list: string) => `coalesce(${list}, '[]'::jsonb)`;
  // One conditional UPDATE: of two at once, the second re-reads the row after the first commits.
  const claimed = await trx('sessions')
    .where({ id_hash: hashToken(ctx.state.sessionToken!) })
    .whereRaw(`NOT ${used('submissions')} @> jsonb_build_array(?::text)`, [token])
    .update({
      submissions: trx.raw(
        `(SELECT coalesce(jsonb_agg(t.e ORDER BY t.i), '[]'::jsonb)
            FROM jsonb_array_elements(${used('sessions.submissions')}) WITH ORDINALITY AS t(e, i)
           WHERE t.i > jsonb_array_length(${used('sessions.submissions')}) - ?) || jsonb_build_array(?::text)`,
        [USED_KEPT - 1, token],
      ),
    });
  return claimed === 1;
}

/**
 * Whether this POST's submission token was used already, without using it. For a form whose
 * making cannot share the claim's transaction (a password change, whose check runs first): it
 * asks here before the check, and claims the token once the change is made. A repeat that comes
 * after the first one's change is then answered as a repeat, not checked against a password
 * that has just changed.
 */
export async function submissionUsed(db: Db, ctx: DashboardContext): Promise<boolean> {
  const token = ctx.state.form[FIELD];
  if (token === undefined) return false;
  // Refused here, before anything is made: claimSubmission would refuse it only afterwards.
  if (!TOKEN_SHAPE.test(token)) ctx.throw(400, 'This form is damaged: reload the page and send it again.');
  const row = await db('sessions')
    .where({ id_hash: hashToken(ctx.state.sessionToken!) })
    .whereRaw(`coalesce(submissions, '[]'::jsonb) @> jsonb_build_array(?::text)`, [token])
    .first('id_hash');
  return row !== undefined;
}

/** This POST's submission token, if its form has one: kept with the flash the form makes. */
export const submissionOf = (ctx: DashboardContext): string | undefined => ctx.state.form[FIELD];

/**
 * The answer to a form sent again with a used token: the same 303 to `path` as the first, and
 * the page shows the first one's key or link when
 *   - it waits there unshown (a double-click: the browser follows only the last answer), or
 *   - it was shown, by a GET within the last SHOWN_KEPT_MS (session-flash.ts), and this token is
 *     the one that made it: the browser may have been following the first 303 when the form was
 *     sent again, and then dropped that GET's answer, secret and all, for this one's. It is
 *     shown once more, to this session only.
 * Otherwise (shown longer ago, or made by another form) the page says that the form had already
 * been sent and that what it made is listed there: never that nothing was made.
 */
export async function answerRepeated(db: Db, ctx: DashboardContext, path: string): Promise<void> {
  const again = await showAgainForRepeat(db, ctx.state.sessionToken!, path, submissionOf(ctx));
  ctx.redirect(again ? path : `${path}?done=repeated`);
  ctx.status = 303;
}

// A form whose answer names what it made (a new organization's page) keeps that answer, in the
// transaction that made it, under the form's own address and with its token: a repeat, which
// made nothing and so cannot name it, sends the browser where the first one did. One kept
// answer per form address, replaced by the next, so the session does not grow with them.
const keptAnswerSchema = z.object({ submission: z.string(), location: z.string() });

export async function keepAnswer(trx: Db, ctx: DashboardContext, location: string): Promise<void> {
  const submission = ctx.state.form[FIELD];
  if (submission !== undefined) await putFlash(trx, ctx.state.sessionToken!, ctx.path, { submission, location });
}

/** Where the first POST of this form's token answered, if this form's answer was kept for it. */
export async function keptAnswer(db: Db, ctx: DashboardContext): Promise<string | undefined> {
  const kept = await peekFlash(db, ctx.state.sessionToken!, ctx.path, keptAnswerSchema);
  return kept && kept.submission === ctx.state.form[FIELD] ? kept.location : undefined;
}
