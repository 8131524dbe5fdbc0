// Whether a shareholder or beneficial owner is a natural person or an entity, for a holder whose
// import line does not say (`kind`). The people search lists only persons, so the rule errs
// towards "company" wherever the data points at one: a fiscal code that is not a person's, or a
// name ending in a legal form. The store keeps the result (company_holders.holder_kind).
//
// Migration 20261126_026_holder_kind backfilled the rows stored before the column with the same
// rule written as SQL; test/holder-kind-migration.test.ts holds the two in step. A change here
// reaches stored rows only when they are imported again (bump WRITER_VERSION) or by a new
// backfill migration.

export const holderKindValues = ['person', 'company'] as const;
export type HolderKind = (typeof holderKindValues)[number];

/**
 * A natural person's codice fiscale (DM 23/12/1976), omocodia letters allowed. Any other code
 * (11 digits: an Italian company's; anything else: a foreign entity's identifier) names an entity.
 */
export const PERSONAL_FISCAL_CODE_PATTERN = '^[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$';

/**
 * Legal forms recognised at the end of a name, spelt as usually written. Matching ignores case
 * and the dots and spaces between the parts, so "S.r.l.", "SRL", "s.r.l" and "S. r. l." are one
 * form. ASCII only: Postgres folds the case of other letters by the server's locale, JavaScript
 * by Unicode, and the backfill must agree with the import.
 */
export const LEGAL_FORM_SUFFIXES = [
  // Italian
  'S.r.l.', 'S.r.l.s.', 'S.r.l.u.', 'S.p.A.', 'S.a.p.a.', 'S.a.s.', 'S.n.c.', 'S.s.', 'S.c.a.r.l.', 'S.c.r.l.', 'S.c.p.a.',
  'S.c.s.', 'Soc. coop.', 'Soc. coop. a r.l.', 'Coop. a r.l.', 'Cooperativa', 'Cooperativa sociale', 'Onlus',
  // Other countries
  'GmbH', 'gGmbH', 'AG', 'KG', 'KGaA', 'OHG', 'S.E.', 'Inc.', 'Incorporated', 'Corp.', 'Corporation', 'L.L.C.', 'L.L.P.', 'L.P.',
  'Ltd.', 'Limited', 'plc', 'S.A.', 'SASU', 'S.A.R.L.', 'S.L.', 'S.L.U.', 'S.A.U.', 'B.V.', 'N.V.', 'AB', 'Oy', 'Oyj',
  'A/S', 'ApS', 'ASA', 'Lda.', 'Ltda.', 's.r.o.', 'Sp. z o.o.', 'Kft.', 'Zrt.',
] as const;

// Each part of a form as written, the dots and spaces between parts optional; a form is a
// whole word (at the start, or after a space or comma), may be followed by "in liquidazione"
// (a company being wound up keeps its form), and ends the name. The source is also valid as a
// Postgres regular expression (~*), which the backfill test relies on.
const formPattern = (form: string) => form.split(/[.\s]+/).filter((part) => part !== '').map(escape).join('[.\\s]*') + '\\.?';
const escape = (part: string) => part.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/** Case-insensitive; as a string so that SQL can use the same pattern. */
export const LEGAL_FORM_SUFFIX_PATTERN = `(?:^|[\\s,])(?:${LEGAL_FORM_SUFFIXES.map(formPattern).join('|')})(?:[\\s,]+in\\s+liquidazione)?\\s*$`;

const personalFiscalCode = new RegExp(PERSONAL_FISCAL_CODE_PATTERN);
const legalFormSuffix = new RegExp(LEGAL_FORM_SUFFIX_PATTERN, 'i');

/** `fiscalCode` as the dossier schema gives it: trimmed and upper-cased. */
export function inferHolderKind(holder: { name: string | null; fiscalCode: string | null }): HolderKind {
  if (holder.fiscalCode !== null && !personalFiscalCode.test(holder.fiscalCode)) return 'company';
  if (holder.name !== null && legalFormSuffix.test(holder.name)) return 'company';
  return 'person';
}
