import type { Db } from '../../core/db/index.js';

/**
 * Which companies the OpenAPI documents show as examples (openapi-documents.ts): those the
 * operator named (OPENAPI_EXAMPLE_COMPANIES: the example, then a large one), else the first
 * company with filed figures, a more useful example than an empty shell, and the first large
 * one with a NACE code (the profile's peers shape). The public document at /docs/openapi.json
 * needs no key, so with real data the operator names companies whose data may be shown to anyone.
 */
export function exampleCompanyFinder(db: Db, named: readonly string[] | undefined): (kind?: 'large') => Promise<string | null> {
  if (named) return async (kind) => (kind === 'large' ? named[1] : named[0]) ?? null;
  return async (kind) => {
    const query = db('companies').whereNotNull('latest_filed_year');
    if (kind === 'large') query.where({ size: 'large' }).whereNotNull('nace_code');
    const row = (await query.orderBy('id').first('fiscal_code')) as { fiscal_code: string } | undefined;
    return row?.fiscal_code ?? null;
  };
}
