import { auditSince, type AuditChange } from '../core/dashboard-auth/index.js';
import type { Db } from '../core/db/index.js';
import type { DashboardState } from './state.js';
import { auditActor, describeAuditAction } from './views/audit-entries.js';
import { html, type Html } from './views/html.js';

// The operator's forms that change an organization's settings (its plan, rate limits, credits
// per period and calls cap, each product's override) are saved only over the values the page
// showed. The page carries them in hidden fields; the save compares them with the values in the
// database, the organization's row locked, and on any difference changes nothing and shows the
// form again with what the values are now and who changed them. Without this, a change made from
// the CLI (or by another operator) while the page was open was silently put back: the save
// compared the form with the database, not with what the operator had seen. Each form says what
// it shows and how to say it (operator-form-versions.ts); the comparison, the hidden fields and
// the notice are this file's, the same for all.

type FormFields = Partial<Record<string, string>>;

/** One thing a form shows, carried in a hidden field of its own. */
export interface ShownPart<V> {
  /** The hidden field's name. */
  field: string;
  /** The part of `values` the form shows, as text the save compares with what the field brought back. */
  version: (values: V) => string;
  /** What it is now, in sentences, when it differs from what the page showed. */
  describe: (state: DashboardState, values: V) => string[];
}

/** What one form shows of the organization's values (`V`), and the activity rows that change them. */
export interface FormVersion<V> {
  parts: readonly ShownPart<V>[];
  /** The activity rows that can change what the form shows: the newest since the page was drawn names who changed it. */
  changes: readonly AuditChange[];
  /**
   * Whether the fields of a form refused with 422 are this form's, which then keeps the hidden
   * fields it came with (what the page had shown, not what is so now); by default, when they
   * include one of its parts. A page has a product form per product, whose fields are alike.
   */
  owns?: (typed: FormFields) => boolean;
}

/** The newest activity row of the organization when the page was drawn: rows after it changed something since. */
const SHOWN_AUDIT = 'shownAudit';

const fieldsOf = (form: { parts: readonly { field: string }[] }) => [...form.parts.map((p) => p.field), SHOWN_AUDIT];

/** The hidden fields of `form` drawn with `values`, the newest activity row then being `auditId`; a refused form's own fields when it had them. */
export function shownFields<V>(form: FormVersion<V>, values: V, auditId: number, typed: FormFields): Html {
  const own = form.owns ? form.owns(typed) : form.parts.some((p) => typed[p.field] !== undefined);
  const kept = (name: string, fresh: string) => (own ? (typed[name] ?? fresh) : fresh);
  return html`${form.parts.map((p) => html`<input type="hidden" name="${p.field}" value="${kept(p.field, p.version(values))}">`)}<input type="hidden" name="${SHOWN_AUDIT}" value="${kept(SHOWN_AUDIT, String(auditId))}">`;
}

/** A save refused because the values changed after the page showed them; nothing was written. */
export class FormChanged extends Error {
  constructor(
    /** What the changed values are now, in the page's language. */
    readonly now: (state: DashboardState) => string[],
    readonly changes: readonly AuditChange[],
    /** The form's hidden fields, drawn again over the values now when the form comes back. */
    readonly fields: readonly string[],
  ) {
    super('the form was drawn with values that have changed since');
  }
}

/**
 * Throws FormChanged when the save would change something (`saveChanges`, judged against the
 * values now) and the organization's values (`now`) are not those the form showed. Read `now`
 * and call this in the save's transaction with the organization's row locked (every change of
 * these values, the CLI's too, locks it first), so that nothing changes them between this check
 * and the save's writes. A save that would change nothing is let through whatever the page
 * showed: the second of a double-click finds the first's values, which are its own, and is
 * answered "Saved.", not told that someone changed them. A form without the hidden fields (a
 * page drawn before they existed, or a script) showed nothing this can vouch for: refused as
 * changed.
 */
export function refuseIfChanged<V>(form: FormVersion<V>, now: V, submitted: FormFields, saveChanges: boolean): void {
  const changed = form.parts.filter((p) => submitted[p.field] !== p.version(now));
  if (changed.length > 0 && saveChanges) throw new FormChanged((state) => changed.flatMap((p) => p.describe(state, now)), form.changes, fieldsOf(form));
}

/** What the operator is told: nothing saved, the values now, who changed them since the page was drawn (when the activity log says). */
export async function changedNotice(state: DashboardState, db: Db, organizationId: string, err: FormChanged, submitted: FormFields): Promise<string> {
  const { t, f } = state;
  const parts = [t('operator.org.changed'), ...err.now(state)];
  // Who: the newest row since the page was drawn that changes these values. None when the
  // change was not a person's (a monthly rollover, a plan's own terms edited) or the form did
  // not say when it was drawn.
  const since = Number(submitted[SHOWN_AUDIT]);
  const [last] = Number.isSafeInteger(since) && since >= 0 ? await auditSince(db, organizationId, since, err.changes, 1) : [];
  if (last) {
    const what = describeAuditAction(state, last);
    parts.push(t('operator.org.changedBy', { who: auditActor(state, last), when: f.dateTime(last.at), what: typeof what === 'string' ? what : last.action }));
  }
  parts.push(t('operator.org.changedAgain'));
  return parts.join(' ');
}
