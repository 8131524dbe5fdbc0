import { z } from 'zod';
import type { Knex } from 'knex';
import { likeEscape, storable } from '../db/index.js';
import { foldNameCheaplySql } from './fold-text.js';
import { runStoreQuery } from './run-store-query.js';
import { codiceFiscalePattern } from './italian-identifiers.js';
import { particlesJoinedSql, surnameVariantPatterns } from './surname-forms.js';
import { criteriaFingerprint, decodeCursor, encodeCursor, NAME_RANKING, searchTextKey } from './search-cursor.js';
import { roleCategoryValues } from './schemas/index.js';
import type { CompanyQueryDeps } from './search-companies.js';

// People search: officers and the natural-person shareholders and beneficial owners, found by
// name through the trigram indexes on company_officers.name and company_holders.name. The
// service holds names only (no personal identifiers), so people are grouped by their
// normalised name: two namesakes are one entry, which the description tells the caller.

export const MAX_ROLES_PER_PERSON = 50;
const personKinds = ['officer', 'shareholder', 'beneficial_owner'] as const;

// An agent doing due diligence often holds a person's codice fiscale, and an empty page for it read
// as "no such person": the service holds people's names only. Refused, not billed, saying so.
function refuseCodes(name: string, ctx: z.RefinementCtx): void {
  const compact = name.replace(/\s+/g, '').toUpperCase();
  if (codiceFiscalePattern.test(compact)) {
    ctx.addIssue({ code: 'custom', message: 'a codice fiscale: people are found by name only, as the service holds no personal codes; a sole proprietorship, whose fiscal code is its owner\'s, is found by it with the company search' });
  } else if (/^(?:IT)?\d{11}$/.test(compact)) {
    ctx.addIssue({ code: 'custom', message: 'a company\'s fiscal code or VAT number: people are found by name; the company search and the structure tool take the code' });
  }
}

export const searchPeopleInputSchema = z.strictObject({
  name: storable(z.string().trim().min(2).max(200)).superRefine(refuseCodes).describe('The person\'s name or part of it, in any word order ("Rossi Mario" finds "MARIO ROSSI"); case and small typos tolerated, and accents mostly ("Nicolo" finds "NICOLO\'" and "Nicolò"; a short name may need its accents: "Lucà Cantù"). "D\'Amico" and "Damico" are one name. Two letters match a whole word ("Wu").'),
  kind: z.enum(personKinds).optional().describe('Only this kind of role: officer (directors, auditors, ...), shareholder, or beneficial_owner.'),
  roleCategory: z.enum(roleCategoryValues).optional().describe('Only officers with this role category (implies kind officer): legal_representative (a sole director, "Amministratore unico", a board\'s chair, an owner), director (a managing director, "Amministratore delegato"), board_member ("Consigliere"), statutory_auditor ("Sindaco"), auditor ("Revisore"), manager ("Direttore generale"), proxy ("Procuratore"), liquidator, other. A company\'s directors in the everyday sense are the first three: for them, leave roleCategory out.'),
  limit: z.number().int().min(1).max(25).default(10).describe('People per page, 1-25.'),
  cursor: z.string().min(1).max(500).optional().describe('nextCursor from the previous page of the same search.'),
});

export const personRoleSchema = z.strictObject({
  // Spellings are one person (personKey): each role says the one its company filed, so that it can
  // be quoted as filed and matched to the structure tool's names.
  name: z.string().describe('The name as this company\'s filing writes it.'),
  kind: z.enum(personKinds),
  role: z.string().nullable().describe('The role as registered (officers).'),
  roleCategory: z.enum(roleCategoryValues).nullable().describe('Normalised role category (officers), as the roleCategory argument lists them; role says it as registered.'),
  share: z.number().nullable().describe('Ownership fraction 0-1 (shareholders and beneficial owners). A beneficial owner\'s null: the register gives none, as when no person holds over 25% and the law names the legal representative.'),
  company: z.strictObject({
    id: z.string(),
    fiscalCode: z.string(),
    legalName: z.string().nullable(),
    status: z.enum(['active', 'dissolved']),
  }),
});

export const personMatchSchema = z.strictObject({
  name: z.string(),
  score: z.number().min(0).max(1).describe('Name similarity to the query, 0-1.'),
  roleCount: z.number().int().describe(`Roles found for this name; at most ${MAX_ROLES_PER_PERSON} are listed.`),
  roles: z.array(personRoleSchema),
});

export const searchPeopleResultSchema = z.strictObject({
  people: z.array(personMatchSchema).describe('Best matches first; one entry per distinct name, in any word order.'),
  nextCursor: z.string().nullable().describe('Pass as cursor to get the next page; null on the last page.'),
});

export type SearchPeopleInput = z.output<typeof searchPeopleInputSchema>;
export type SearchPeopleResult = z.infer<typeof searchPeopleResultSchema>;
type PersonRole = z.infer<typeof personRoleSchema>;

interface Row {
  person_key: string;
  name: string;
  score: string;
  role_count: number;
  roles: PersonRole[] | null;
}

// A person is their name folded as the company search folds names (fold_name, migration 040:
// case, accents, an apostrophe standing for one, dots), spaces collapsed: "NICOLO' PIRRO'" and
// "Nicolò  Pirrò" are one person. A surname's elision or particle is written with an apostrophe,
// a space or joined, and a double first name with a hyphen or a space: the apostrophes go, a
// particle is joined to the word after it and a hyphen is a space (surname-forms.ts), so
// "D'AMICO MARIO", "D AMICO MARIO" and "DAMICO MARIO" are one person, "DE ROSA" and "DEROSA" one,
// "Anna-Lisa" and "Anna Lisa" one, and "Damico" scores 1 for each. And the words are taken in
// alphabetical order, as registries write the surname first and people the first name: "ROSSI
// MARIO" and "Mario Rossi" are one person (the service holds no more than names, so namesakes are
// one already). (Upper case, as the key was before the fold; a cursor holds the key, and one of an
// earlier release is refused: PERSON_KEY.)
// (Split by string_to_array: a quarter of the cost of regexp_split_to_table, which took the
// commonest surname's 17,000 spellings 44 ms longer.)
const personKey = (joined: string) =>
  `upper(array_to_string(ARRAY(SELECT w FROM unnest(string_to_array(${joined}, ' ')) w WHERE w <> '' ORDER BY w), ' '))`;
const asOneName = (folded: string) => particlesJoinedSql(`replace(${folded}, '''', '')`);
const PERSON_KEY = 'particles joined, words sorted';
// A name matches when the query is a fragment of it or similar to one of its words, as stored,
// through migration 001's GIN indexes: indexes of the folded names cost an import 13% (migration
// 040). A registry's "NICOLO'" is the word "nicolo" already, and "Nicolò" has a word similarity of
// 0.71 to it, but a short name loses more to an accent: "luca cantu" does not find "Lucà Cantù"
// (0.54, under the 0.6 a match needs), as docs/mcp.md says.
// A fragment needs three letters or digits in a row: the index looks names up by their trigrams,
// and "%li%" has none, so it would read every name. A shorter query matches whole words, in any
// order: "Li" finds "LI WEI", not "Lisa" nor "Giuliano". (By word similarity, which also matches
// a word beginning with the query, "Ro" listed a tenth of all names and took 2.4 s at a million
// companies; a word alone or between spaces is three trigrams the index finds in 15 ms:
// bench:people.) Letters of any script count, as pg_trgm's do: "Zoë" and "Иван" are fragments.
// Each way of matching is a scan of its own: as one OR, Postgres tested both ways twice on every
// row it read (once as the index's recheck, once as a filter).
const hasTrigram = (text: string) => /[\p{L}\p{N}]{3}/u.test(text);
// A word whole (LIKE-escaped): the name itself, or the word at its start, at its end or between
// spaces; one ending in a vowel also with the apostrophe a registry writes for its accent ("LU'").
function wholeWordPatterns(word: string): string[] {
  const forms = /[aeiou]$/i.test(word) ? [word, `${word}'`] : [word];
  return forms.flatMap((form) => [form, `${form} %`, `% ${form}`, `% ${form} %`]);
}
function nameScans(column: string, text: string): Array<{ sql: string; bindings: string[] }> {
  if (!hasTrigram(text)) {
    const words = text.split(' ').filter((word) => word !== '').map((word) => wholeWordPatterns(likeEscape(word)));
    return [{
      sql: words.map((patterns) => `(${patterns.map(() => `${column} ILIKE ?`).join(' OR ')})`).join(' AND '),
      bindings: words.flat(),
    }];
  }
  const pattern = `%${likeEscape(text)}%`;
  const scans = [{ sql: `${column} ILIKE ?`, bindings: [pattern] }, { sql: `${column} NOT ILIKE ? AND ? <% ${column}`, bindings: [pattern, text] }];
  // A surname alone in its other forms (surname-forms.ts): only the names the two scans above did
  // not find, so that each match is read once.
  const variants = surnameVariantPatterns(text);
  if (variants.length === 0) return scans;
  return [...scans, {
    sql: `(${variants.map(() => `${column} ILIKE ?`).join(' OR ')}) AND ${column} NOT ILIKE ? AND NOT ? <% ${column}`,
    bindings: [...variants, pattern, text],
  }];
}

export async function searchPeople(deps: CompanyQueryDeps, input: SearchPeopleInput): Promise<SearchPeopleResult> {
  const { limit, cursor, ...criteria } = input;
  const fingerprint = criteriaFingerprint({ ...criteria, name: searchTextKey(criteria.name), ranking: NAME_RANKING, person: PERSON_KEY });
  const position = cursor === undefined ? undefined : decodeCursor(cursor, fingerprint, { companyId: false });
  const text = input.name.replace(/\s+/g, ' ');
  const kind = input.roleCategory ? 'officer' : input.kind;

  const parts: string[] = [];
  const bindings: Knex.RawBinding[] = [];
  if (kind === undefined || kind === 'officer') {
    for (const scan of nameScans('o.name', text)) {
      parts.push(`SELECT o.name, 'officer'::text AS kind, o.role, o.role_category, NULL::float8 AS share, o.company_id
      FROM company_officers o WHERE ${scan.sql}${input.roleCategory ? ' AND o.role_category = ?' : ''}`);
      bindings.push(...scan.bindings);
      if (input.roleCategory) bindings.push(input.roleCategory);
    }
  }
  if (kind !== 'officer') {
    // Only holders stored as persons (the import's kind, given or inferred from the fiscal code and
    // a legal form ending the name). A holder linked to a stored company, or named by an 11-digit
    // fiscal code, is a company whatever its line said; but for a sole proprietorship (ditta
    // individuale, DI), which is its owner in law, with the owner's name and codice fiscale: her
    // stakes held through it are hers (a due-diligence review asked "what else does she own" and
    // was shown none of them).
    for (const scan of nameScans('h.name', text)) {
      parts.push(`SELECT h.name, h.relation AS kind, NULL::text AS role, NULL::text AS role_category, h.share, h.company_id
      FROM company_holders h
      WHERE h.relation IN (${kind === undefined ? "'shareholder', 'beneficial_owner'" : '?'})
        AND (h.holder_kind = 'person' AND h.related_company_id IS NULL AND (h.related_fiscal_code IS NULL OR h.related_fiscal_code !~ '^[0-9]{11}$')
          OR h.related_company_id IS NOT NULL AND EXISTS (SELECT 1 FROM companies dc WHERE dc.id = h.related_company_id AND dc.legal_form = 'DI'))
        AND ${scan.sql}`);
      if (kind !== undefined) bindings.push(kind);
      bindings.push(...scan.bindings);
    }
  }

  const afterBindings: Knex.RawBinding[] = [];
  let afterSql = '';
  if (position) {
    afterSql = 'WHERE (-p.score, p.person_key) > (-(?::numeric), ?)';
    afterBindings.push(position.score, position.name);
  }

  // Each step works on as little as it can, as a common surname matches tens of thousands of
  // roles (Rossi, at a million companies: 70,000 roles of 17,000 spellings): the matches are read
  // once; a name is folded and scored once per spelling, not per role; and the roles of the page's
  // people are joined back in one pass, not one pass over every match per person listed.
  const sql = `
WITH matches AS MATERIALIZED (
  SELECT m.* FROM (${parts.join('\n  UNION ALL\n  ')}) m WHERE m.name IS NOT NULL
), spellings AS MATERIALIZED (
  SELECT name, roles, ${personKey('joined')} AS person_key, word_similarity(${asOneName('fold_name(?::text)')}, joined) AS similarity
  FROM (SELECT name, count(*)::int AS roles, ${asOneName(foldNameCheaplySql('name'))} AS joined FROM matches GROUP BY name) s
), people AS (
  -- The name as shown: one of its spellings, its spaces as the key's (an import's "Giuseppe  Verdi"
  -- is shown "Giuseppe Verdi").
  SELECT person_key, min(regexp_replace(btrim(name), '\\s+', ' ', 'g')) AS name, sum(roles)::int AS role_count,
         round(max(similarity)::numeric, 4) AS score
  FROM spellings GROUP BY person_key
), page AS MATERIALIZED (
  SELECT * FROM people p ${afterSql} ORDER BY p.score DESC, p.person_key ASC LIMIT ?
), page_roles AS MATERIALIZED (
  -- A person's first roles by company as imported (its id), then kind, role and share: one order
  -- always, also for two roles in one company.
  SELECT * FROM (
    SELECT s.person_key, m.name, m.kind, m.role, m.role_category, m.share, m.company_id,
           row_number() OVER (PARTITION BY s.person_key ORDER BY m.company_id, m.kind, m.role, m.share) AS nth
    FROM page p JOIN spellings s ON s.person_key = p.person_key JOIN matches m ON m.name = s.name) r
  WHERE r.nth <= ${MAX_ROLES_PER_PERSON}
)
SELECT p.person_key, p.name, p.score, p.role_count,
  (SELECT json_agg(json_build_object(
      'name', r.name, 'kind', r.kind, 'role', r.role, 'roleCategory', r.role_category, 'share', r.share,
      'company', json_build_object('id', c.id::text, 'fiscalCode', c.fiscal_code, 'legalName', c.legal_name,
                                   'status', CASE WHEN c.dissolution_year IS NULL THEN 'active' ELSE 'dissolved' END))
    ORDER BY c.legal_name, r.kind, c.id, r.role, r.share)
   FROM page_roles r JOIN companies c ON c.id = r.company_id WHERE r.person_key = p.person_key) AS roles
FROM page p
ORDER BY p.score DESC, p.person_key ASC`;

  const result = await runStoreQuery(deps, 'people search', deps.db.raw<{ rows: Row[] }>(sql, [...bindings, text, ...afterBindings, limit + 1]));
  const rows = result.rows.slice(0, limit);
  const last = rows[rows.length - 1];
  const nextCursor = result.rows.length > limit && last ? encodeCursor({ score: last.score, name: last.person_key, id: '' }, fingerprint) : null;
  return {
    people: rows.map((r) => ({ name: r.name, score: Number(r.score), roleCount: r.role_count, roles: r.roles ?? [] })),
    nextCursor,
  };
}
