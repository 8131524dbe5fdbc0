import type { Knex } from 'knex';

// Whether a shareholder or beneficial owner is a natural person or a company, stored with it:
// the people search listed every holder not linked to a stored company and not named by an
// 11-digit code as a person, foreign parents ("Müller Beteiligungs GmbH") included. The import
// now writes the kind each line gives, or infers it (core/companies/infer-holder-kind.ts);
// subsidiaries are companies. Rows stored before are classified here by the same rule, written
// as SQL over what they kept (name and fiscal code). Migrations import no application code, so
// the two patterns are copies: test/holder-kind-migration.test.ts checks that this SQL and the
// import's rule classify a list of holders alike.
//
// The backfill rewrites every holder row once (an UPDATE of the whole table), in the
// migration's transaction.

/** A natural person's codice fiscale; stored codes are upper-case. */
export const PERSONAL_FISCAL_CODE = '^[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$';

/** A name ending in a legal form, matched case-insensitively (~*). */
export const LEGAL_FORM_SUFFIX = '(?:^|[\\s,])(?:S[.\\s]*r[.\\s]*l\\.?|S[.\\s]*r[.\\s]*l[.\\s]*s\\.?|S[.\\s]*r[.\\s]*l[.\\s]*u\\.?|S[.\\s]*p[.\\s]*A\\.?|S[.\\s]*a[.\\s]*p[.\\s]*a\\.?|S[.\\s]*a[.\\s]*s\\.?|S[.\\s]*n[.\\s]*c\\.?|S[.\\s]*s\\.?|S[.\\s]*c[.\\s]*a[.\\s]*r[.\\s]*l\\.?|S[.\\s]*c[.\\s]*r[.\\s]*l\\.?|S[.\\s]*c[.\\s]*p[.\\s]*a\\.?|S[.\\s]*c[.\\s]*s\\.?|Soc[.\\s]*coop\\.?|Soc[.\\s]*coop[.\\s]*a[.\\s]*r[.\\s]*l\\.?|Coop[.\\s]*a[.\\s]*r[.\\s]*l\\.?|Cooperativa\\.?|Cooperativa[.\\s]*sociale\\.?|Onlus\\.?|GmbH\\.?|gGmbH\\.?|AG\\.?|KG\\.?|KGaA\\.?|OHG\\.?|S[.\\s]*E\\.?|Inc\\.?|Incorporated\\.?|Corp\\.?|Corporation\\.?|L[.\\s]*L[.\\s]*C\\.?|L[.\\s]*L[.\\s]*P\\.?|L[.\\s]*P\\.?|Ltd\\.?|Limited\\.?|plc\\.?|S[.\\s]*A\\.?|SASU\\.?|S[.\\s]*A[.\\s]*R[.\\s]*L\\.?|S[.\\s]*L\\.?|S[.\\s]*L[.\\s]*U\\.?|S[.\\s]*A[.\\s]*U\\.?|B[.\\s]*V\\.?|N[.\\s]*V\\.?|AB\\.?|Oy\\.?|Oyj\\.?|A/S\\.?|ApS\\.?|ASA\\.?|Lda\\.?|Ltda\\.?|s[.\\s]*r[.\\s]*o\\.?|Sp[.\\s]*z[.\\s]*o[.\\s]*o\\.?|Kft\\.?|Zrt\\.?)(?:[\\s,]+in\\s+liquidazione)?\\s*$';

/**
 * The kind of a company_holders row (columns relation, name, related_fiscal_code), as SQL whose
 * two bindings are PERSONAL_FISCAL_CODE and LEGAL_FORM_SUFFIX. Exported for the test above.
 */
export const HOLDER_KIND_SQL = `CASE
  WHEN relation = 'subsidiary' THEN 'company'
  WHEN related_fiscal_code IS NOT NULL AND related_fiscal_code !~ ? THEN 'company'
  WHEN name ~* ? THEN 'company'
  ELSE 'person' END`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE company_holders ADD COLUMN holder_kind text');
  await knex.raw(`UPDATE company_holders SET holder_kind = ${HOLDER_KIND_SQL}`, [PERSONAL_FISCAL_CODE, LEGAL_FORM_SUFFIX]);
  // The import writes a kind for every holder, so none is left unknown.
  await knex.raw('ALTER TABLE company_holders ALTER COLUMN holder_kind SET NOT NULL');
  await knex.raw("ALTER TABLE company_holders ADD CONSTRAINT company_holders_holder_kind_chk CHECK (holder_kind IN ('person','company'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE company_holders DROP COLUMN holder_kind');
}
