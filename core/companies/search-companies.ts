import { z } from 'zod';
import type { Knex } from 'knex';
import { likeEscape, storable, type Db } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { AppError } from '../errors/index.js';
import { codiceFiscalePattern } from './italian-identifiers.js';
import { municipalityCondition } from './municipality-match.js';
import { comuneWrittenOtherwise, isComune, nearestComuni } from './municipality-names.js';
import { isProvinceCode, provinceCodeOf } from './province-names.js';
import { runStoreQuery } from './run-store-query.js';
import { criteriaFingerprint, decodeCursor, encodeCursor, NAME_RANKING, searchTextKey, type CursorPosition } from './search-cursor.js';
import { legalFormValues, naceSectionValues, sizeValues, type CompanySize, type LegalForm, type NaceSection } from './schemas/index.js';

// Company search: by name fragment (trigram word similarity of the names folded as fold_name
// does, nearest first from the GiST index of that fold, and fragments anywhere in the name from
// its GIN index), or by
// exact fiscal code / VAT number (classifyQuery tells which), with filters and keyset pagination.
// The schemas are the contract of the MCP tool that exposes it.

/** A NACE code refused: an ATECO code's six digits (62.01.00) told its NACE class (62.01). */
function naceCodeRefusal(input: unknown): string {
  const refusal = 'a NACE code or prefix like 62 or 62.01';
  if (typeof input !== 'string') return refusal;
  const ateco = /^\s*(\d{2}\.\d{2})\.\d{1,2}\s*$/.exec(input);
  return ateco ? `${refusal}: ${ateco[1]}, the NACE class of the ATECO code ${input.trim()}` : refusal;
}

/** A province refused for its shape: a province's name ("Milano") told its code. */
function provinceShapeRefusal(input: unknown): string {
  const refusal = 'a two-letter province code like MI';
  const code = typeof input === 'string' && input.length <= 60 ? provinceCodeOf(input) : undefined;
  return code ? `${refusal}: ${code} for ${input}` : refusal;
}

export const searchCompaniesInputSchema = z.strictObject({
  query: storable(z.string().trim().min(2).max(200)).optional()
    .describe('Part of the legal name (word order, case, accented vowels, dots and small typos tolerated: caffe finds Caffè, srl S.r.l.; digits in it are fine), or an exact fiscal code (11 digits, or a person\'s 16-character codice fiscale) or VAT number (11 digits, with or without the IT prefix; 10 digits are read as one that lost its leading zero). Omit to list companies by the filters alone.'),
  naceSection: z.enum(naceSectionValues).optional().describe('NACE Rev. 2 section letter, e.g. C (manufacturing), J (information and communication).'),
  naceCode: z.string().regex(/^\d{2}(?:\.\d{1,2})?$/, { error: (issue) => naceCodeRefusal(issue.input) }).optional()
    .describe('NACE code or prefix: 62 matches every 62.xx code, 62.01 only that class.'),
  province: z.string().regex(/^[A-Za-z]{2}$/, { error: (issue) => provinceShapeRefusal(issue.input) }).transform((s) => s.toUpperCase()).optional()
    .describe('Province code (sigla), e.g. MI, RM, TO; a code of no province is refused.'),
  municipality: storable(z.string().trim().min(1).max(100)).optional().describe('Municipality (comune) name, whole: case and accents optional (Cantu or Cantu\' finds Cantù), e.g. Milano; an English name or short form (Milan, Reggio Emilia) is read as the comune, and a name that is none is refused with the nearest.'),
  size: z.enum(sizeValues).optional().describe('Size class of the latest filed year (EU SME definition).'),
  legalForm: z.enum(legalFormValues).optional().describe('Legal form, e.g. SRL, SPA.'),
  status: z.enum(['active', 'dissolved']).optional().describe('active: no dissolution recorded; dissolved: a dissolution year is recorded. Omit for both.'),
  limit: z.number().int().min(1).max(50).default(10).describe('Results per page, 1-50.'),
  cursor: z.string().min(1).max(500).optional().describe('nextCursor from the previous page of the same search.'),
});

export const companySearchItemSchema = z.strictObject({
  id: z.string().describe("The service's internal company identifier."),
  fiscalCode: z.string(),
  vatNumber: z.string().nullable(),
  legalName: z.string().nullable(),
  legalForm: z.enum(legalFormValues).nullable(),
  naceCode: z.string().nullable(),
  naceSection: z.enum(naceSectionValues).nullable(),
  province: z.string().nullable(),
  municipality: z.string().nullable(),
  size: z.enum(sizeValues).nullable(),
  status: z.enum(['active', 'dissolved']),
  dissolutionYear: z.number().int().nullable(),
  latestFiledYear: z.number().int().nullable(),
  latestRevenue: z.number().nullable().describe('Revenue of the latest filed year, euro.'),
  latestEmployees: z.number().int().nullable(),
  score: z.number().min(0).max(1).describe('Relevance to the query, 0-1: 1 for an exact fiscal code or VAT match, or a name holding every word of the query; 0 without a query.'),
});

export const searchCompaniesResultSchema = z.strictObject({
  items: z.array(companySearchItemSchema).describe('Best matches first.'),
  nextCursor: z.string().nullable().describe('Pass as cursor to get the next page; null on the last page.'),
  truncated: z.boolean().describe('true when this page of a name search, or one before it, may leave out companies that rank among its own: more than 250 companies not yet listed matched the name equally well, more than a search ranks at once; add words of the name or a filter to see them all.'),
});

export type SearchCompaniesInput = z.output<typeof searchCompaniesInputSchema>;
export type CompanySearchItem = z.infer<typeof companySearchItemSchema>;
export type SearchCompaniesResult = z.infer<typeof searchCompaniesResultSchema>;

export interface CompanyQueryDeps {
  db: Db;
  queryTimeoutMs: number;
  logger: Logger;
}

interface Row {
  id: number;
  fiscal_code: string;
  vat_number: string | null;
  legal_name: string | null;
  legal_form: LegalForm | null;
  nace_code: string | null;
  nace_section: NaceSection | null;
  province: string | null;
  municipality: string | null;
  size: CompanySize | null;
  dissolution_year: number | null;
  latest_filed_year: number | null;
  latest_revenue: number | null;
  latest_employees: number | null;
  score: string; // numeric: exact, so the cursor compares equal
  /** A name search's windows: how many rows each held, and the lowest score in each (see mayLeaveOut). */
  nearest_rows?: string;
  nearest_floor?: string | null;
  fragment_rows?: string;
  fragment_floor?: string | null;
  /** The whole name's similarity to a name query (0 for the other searches), numeric too. */
  closeness: string;
  sort_name: string;
}

export type Match =
  | { kind: 'none' }
  /** orName: what to search by name when no company has the code (a name that looks like one). */
  | { kind: 'identifier'; code: string; orName?: string }
  | { kind: 'name'; text: string };

const PARTITA_IVA = /^(?:IT)?\d{11}$/;

// What the store accepts as a 16-character fiscal code (the spec's pattern): a person's codice
// fiscale has a stricter layout, but a code imported as it was filed may not.
const SIXTEEN_CHARACTER_CODE = /^(?=.*\d)(?=.*[A-Z])[A-Z0-9]{16}$/;

// A partita IVA whose leading zero a spreadsheet dropped (02071690198 kept as a number).
const LOST_LEADING_ZERO = /^(?:IT)?\d{10}$/;

// The label a code is often pasted with: "P.IVA 02071690198", "C.F.: RSSMRA80A01H501U".
const CODE_LABEL = /^\s*(?:p\.?\s*iva|partita\s+iva|c\.?\s*f\.?|codice\s+fiscale)\s*[:.]?\s*/i;

/**
 * Which search a query asks for. 11 digits, optionally IT-prefixed, are a partita IVA or a
 * company's codice fiscale: a number no name is. 10 digits are one whose leading zero was lost,
 * looked up with it (and searched by name when no company has that code, as below). 16 letters
 * and digits, spaces aside, may be a codice fiscale or a name ("Alfa 1 Costruzioni"): the code is
 * looked up first, and the query searched by name when no company has that code. A code may come
 * after its label (P.IVA, C.F.). Anything else is a name.
 */
export function classifyQuery(query: string | undefined): Match {
  if (query === undefined) return { kind: 'none' };
  const text = query.replace(/\s+/g, ' ');
  const compact = query.replace(CODE_LABEL, '').replace(/\s+/g, '').toUpperCase();
  if (PARTITA_IVA.test(compact)) return { kind: 'identifier', code: compact.slice(-11) };
  if (LOST_LEADING_ZERO.test(compact)) return { kind: 'identifier', code: `0${compact.slice(-10)}`, orName: text };
  // A codice fiscale whose every digit omocodia replaced by a letter has no digit left.
  if (SIXTEEN_CHARACTER_CODE.test(compact) || codiceFiscalePattern.test(compact)) return { kind: 'identifier', code: compact, orName: text };
  return { kind: 'name', text };
}

/**
 * Whether a company has this codice fiscale, whatever the filters: the reading of a query must
 * not change with them or from page to page, or a cursor would continue another search.
 * (A 16-character code is never a VAT number, which is 11 digits.)
 */
async function codeOnFile(deps: CompanyQueryDeps, code: string): Promise<boolean> {
  const result = await runStoreQuery(deps, 'company search code', deps.db.raw<{ rows: unknown[] }>('SELECT 1 FROM companies WHERE fiscal_code = ? LIMIT 1', [code]));
  return result.rows.length > 0;
}

/**
 * The municipality a search filters by: as given when a company on file has it (whatever the
 * list says: a registry's own spelling is found as stored), else the comune it stands for when
 * written otherwise ("Milan", "Reggio Emilia", "Porto Sant Elpidio") and that one is on file. A
 * name that is no comune at all is refused with the nearest (invalid_params: an empty answer read
 * as "no such company there"); a comune with no company on file is searched, and finds nobody.
 */
async function municipalityToSearch(deps: CompanyQueryDeps, municipality: string): Promise<string> {
  if (await municipalityOnFile(deps, municipality)) return municipality;
  const official = comuneWrittenOtherwise(municipality);
  if (official !== undefined) return (await municipalityOnFile(deps, official)) ? official : municipality;
  if (isComune(municipality)) return municipality;
  const near = nearestComuni(municipality);
  const message = `no comune is named ${JSON.stringify(municipality)}: ${near.length > 0 ? `did you mean ${near.join(' or ')}? ` : ''}give a comune's name as ISTAT writes it (Reggio nell'Emilia), or filter by province`;
  throw filterRefusal('municipality', message);
}

/** A filter's value refused: the detail under its argument, the message the same as a sentence. */
const filterRefusal = (path: string, message: string) =>
  new AppError('invalid_params', `${message[0]!.toUpperCase()}${message.slice(1)}.`, { details: [{ path, message }] });

async function municipalityOnFile(deps: CompanyQueryDeps, municipality: string): Promise<boolean> {
  const condition = municipalityCondition(municipality);
  const result = await runStoreQuery(deps, 'company search municipality', deps.db.raw<{ rows: unknown[] }>(`SELECT 1 FROM companies c WHERE ${condition.sql} LIMIT 1`, condition.bindings));
  return result.rows.length > 0;
}

/**
 * A province's code no province of ISTAT's list has is refused (invalid_params: an empty answer
 * read as "no company there"), unless a company on file has it (a code of a province since
 * abolished, on the registry's older rows).
 */
async function refuseUnknownProvince(deps: CompanyQueryDeps, province: string): Promise<void> {
  if (isProvinceCode(province)) return;
  const result = await runStoreQuery(deps, 'company search province', deps.db.raw<{ rows: unknown[] }>('SELECT 1 FROM companies WHERE province = ? LIMIT 1', [province]));
  if (result.rows.length > 0) return;
  const message = `no province has the code ${province}: give a province's two-letter code (sigla), e.g. MI for Milano, RM for Roma`;
  throw filterRefusal('province', message);
}

export async function searchCompanies(deps: CompanyQueryDeps, given: SearchCompaniesInput): Promise<SearchCompaniesResult> {
  if (given.province !== undefined) await refuseUnknownProvince(deps, given.province);
  const input = given.municipality === undefined ? given : { ...given, municipality: await municipalityToSearch(deps, given.municipality) };
  const { limit, cursor, ...criteria } = input;
  const fingerprint = criteriaFingerprint({ ...criteria, ...(criteria.query === undefined ? {} : { query: searchTextKey(criteria.query), ranking: NAME_RANKING }) });
  let position = cursor === undefined ? undefined : decodeCursor(cursor, fingerprint, { companyId: true });
  let match = classifyQuery(input.query);
  if (match.kind === 'identifier' && match.orName !== undefined && !(await codeOnFile(deps, match.code))) match = { kind: 'name', text: match.orName };
  if (match.kind === 'name' && position && position.closeness === undefined) position = { ...position, closeness: await closenessOf(deps, match.text, position.id) };

  const { sql, bindings } = searchCompaniesSql(input, match, position);
  const result = await runStoreQuery(deps, 'company search', deps.db.raw<{ rows: Row[] }>(sql, bindings));
  const rows = result.rows.slice(0, limit);
  const last = rows[rows.length - 1];
  // Once a page may have left companies out, every later page says so too (the cursor carries
  // it): an agent that reads only the last page's flag would otherwise take the list as whole.
  const truncated = position?.truncated === true || (match.kind === 'name' && last !== undefined && mayLeaveOut(result.rows[0]!, last));
  const nextCursor = result.rows.length > limit && last
    ? encodeCursor({ score: last.score, name: last.sort_name, id: String(last.id), ...(match.kind === 'name' ? { closeness: last.closeness } : {}), truncated }, fingerprint)
    : null;
  return { items: rows.map(toItem), nextCursor, truncated };
}

/**
 * Whether a name search's page may leave out companies that rank among its own: a window was
 * full (NAME_WINDOW names, nearest first) and its farthest name scores as the page's last, so
 * more names of that score may lie past it, unranked: more than NAME_WINDOW not yet listed tie
 * on it. Otherwise every name scoring as high as the page's last was in the windows.
 */
function mayLeaveOut(first: Row, last: Row): boolean {
  const full = (rows: string | undefined, floor: string | null | undefined) => Number(rows) >= NAME_WINDOW && floor !== null && floor !== undefined && Number(floor) === Number(last.score);
  return full(first.nearest_rows, first.nearest_floor) || full(first.fragment_rows, first.fragment_floor);
}

/**
 * The closeness of a cursor's last row (by its id), for a cursor made before closeness was a sort
 * key: a name search then continues exactly where it left off. A row gone since counts as the
 * highest, so that the rest of its score's names come again rather than some being skipped.
 */
async function closenessOf(deps: CompanyQueryDeps, text: string, id: string): Promise<string> {
  const result = await runStoreQuery(deps, 'company search cursor', deps.db.raw<{ rows: { closeness: string }[] }>(`SELECT ${CLOSENESS} AS closeness FROM companies c WHERE c.id = ?::bigint`, [text, id]));
  return result.rows[0]?.closeness ?? '1';
}

/**
 * How many of the names nearest a query a page of a name search ranks. The nearest come from the
 * GiST trigram index of the folded names (migration 040) in order of word similarity, without
 * scoring every match: at a million companies "Costruzioni" alone matches tens of thousands,
 * which scored and sorted took seconds. The page is then the window sorted by score, name and id,
 * and the next page's window starts at its cursor's score: pages are exact unless more companies
 * than this tie on one score, of which they then list this many (docs/mcp.md).
 */
export const NAME_WINDOW = 250;

// A name search compares the name and the query folded alike (case, accents, an apostrophe standing
// for one, dots: fold_name, migration 040, this release's foldNameSql), so "citta" finds "Città"
// as closely as "città" does, and "srl" finds "S.r.l.". The folded name is the expression of the
// GiST index that hands over the nearest names (migration 040).
const FOLDED_NAME = 'fold_name(c.legal_name)';
const FOLDED_QUERY = 'fold_name(?::text)';
// The score is the word similarity, whose distance orders the GiST index: the window's names are
// then exactly the best scored. (It was the greater of it and the similarity, which is almost never
// above it, by less than 0.01 in about one pair of 100,000, and cost a fold of every name read.)
const SCORE = `round(word_similarity(${FOLDED_QUERY}, ${FOLDED_NAME})::numeric, 4)`;
// Among names of one score (every name holding all the query's words scores 1), the closest to the
// query as a whole first: the name typed. Computed for the window's rows only; ordering the index
// scan by it too, or adding a window of the names closest as a whole (GiST `<->`), made a common
// word's page two to five times as long (docs/benchmark.md).
const CLOSENESS = `round(similarity(${FOLDED_NAME}, ${FOLDED_QUERY})::numeric, 4)`;

const COLUMNS = `c.id, c.fiscal_code, c.vat_number, c.legal_name, c.legal_form, c.nace_code, c.nace_section, c.province,
         c.municipality, c.size, c.dissolution_year, c.latest_filed_year, c.latest_revenue, c.latest_employees`;

/**
 * The statement searchCompanies runs and its bindings, for `match` (classifyQuery's reading, once
 * the code was looked up) and the page after `position`. Exported so that a test can EXPLAIN it.
 */
export function searchCompaniesSql(input: SearchCompaniesInput, match: Match, position: CursorPosition | undefined): { sql: string; bindings: Knex.RawBinding[] } {
  const filters: string[] = [];
  const filterBindings: Knex.RawBinding[] = [];
  if (input.naceSection) { filters.push('c.nace_section = ?'); filterBindings.push(input.naceSection); }
  if (input.naceCode) { filters.push('c.nace_code LIKE ?'); filterBindings.push(`${input.naceCode}%`); }
  if (input.province) { filters.push('c.province = ?'); filterBindings.push(input.province); }
  if (input.municipality) {
    const condition = municipalityCondition(input.municipality);
    filters.push(condition.sql);
    filterBindings.push(...condition.bindings);
  }
  if (input.size) { filters.push('c.size = ?'); filterBindings.push(input.size); }
  if (input.legalForm) { filters.push('c.legal_form = ?'); filterBindings.push(input.legalForm); }
  if (input.status === 'active') filters.push('c.dissolution_year IS NULL');
  if (input.status === 'dissolved') filters.push('c.dissolution_year IS NOT NULL');

  // A constant score as Postgres prints it, or null for a score per row.
  const constantScore = match.kind === 'identifier' ? '1' : match.kind === 'name' ? null : '0';
  // Rows after the cursor, for the searches of a constant score (a name search's windows hold
  // only such rows themselves: fromCursor below).
  const after: Knex.RawBinding[] = [];
  let afterSql = '';
  if (position && position.score === constantScore) {
    // Every row has the cursor's score: the rest of the order alone, which an index on a
    // filter's column, the name and the id (migration 037) reads from the cursor on, where the
    // comparison below would read the filter's rows from the first.
    afterSql = 'WHERE (r.sort_name, r.id) > (?, ?::bigint)';
    after.push(position.name, position.id);
  } else if (position && match.kind !== 'name') {
    // A cursor whose score is not its search's (only a hand-made one): the whole order, one row
    // comparison on (-score, -closeness, name, id), closeness 0 outside a name search.
    afterSql = 'WHERE (-r.score, -r.closeness, r.sort_name, r.id) > (-(?::numeric), -(?::numeric), ?, ?::bigint)';
    after.push(position.score, position.closeness ?? '0', position.name, position.id);
  }
  const order = `ORDER BY r.score DESC, r.closeness DESC, r.sort_name ASC, r.id ASC
LIMIT ?`;

  if (match.kind === 'name') {
    const { text } = match;
    // Each window holds the names nearest the query among those after the cursor's row: the names
    // already listed do not take its places (with `score <= cursor's`, 230 ties listed left 20
    // places for the rest, and paging skipped every lower score).
    const scored = [text, text]; // SCORE's and CLOSENESS's query
    const fromCursor = position
      ? [`(-${SCORE}, -${CLOSENESS}, coalesce(c.legal_name, ''), c.id) > (-(?::numeric), -(?::numeric), ?, ?::bigint)`]
      : [];
    const fromCursorBindings: Knex.RawBinding[] = position ? [...scored, position.score, position.closeness ?? '0', position.name, position.id] : [];
    const windowOf = (conditions: string[], conditionBindings: Knex.RawBinding[]) => ({
      sql: `SELECT ${COLUMNS},
         ${SCORE} AS score, ${CLOSENESS} AS closeness, coalesce(c.legal_name, '') AS sort_name
  FROM companies c
  WHERE ${[...conditions, ...filters, ...fromCursor].join(' AND ')}
  ORDER BY ${FOLDED_NAME} <->> ${FOLDED_QUERY}
  LIMIT ${NAME_WINDOW}`,
      bindings: [...scored, ...conditionBindings, ...filterBindings, ...fromCursorBindings, text],
    });
    // Word similarity (%>, at pg_trgm's threshold) tolerates typos and word order; a fragment
    // anywhere in the name (LIKE) that is not similar enough scores below every similar name,
    // so it is looked for only when the similar names do not fill the window.
    // Both are compared folded, the fragment as a pattern (the fold leaves LIKE's escapes as they
    // are), through migration 040's GIN index of the folded name, which also serves the
    // similarity condition when a filter's rows are the fewer.
    const nearest = windowOf([`${FOLDED_NAME} %> ${FOLDED_QUERY}`], [text]);
    // A query the fold leaves shorter than the 2 characters a query must have ("..", "a.", ". .")
    // would be a pattern such as '%%' or '%a%' that most names match: no fragment.
    const fragments = windowOf(
      [`(SELECT count(*) FROM nearest) < ${NAME_WINDOW}`, `length(btrim(${FOLDED_QUERY})) >= 2`, `${FOLDED_NAME} LIKE ${FOLDED_QUERY}`, `NOT (${FOLDED_NAME} %> ${FOLDED_QUERY})`],
      [text, `%${likeEscape(text)}%`, text],
    );
    const sql = `
WITH nearest AS (
  ${nearest.sql}
), fragments AS (
  ${fragments.sql}
)
SELECT r.*,
  (SELECT count(*) FROM nearest) AS nearest_rows, (SELECT min(score) FROM nearest) AS nearest_floor,
  (SELECT count(*) FROM fragments) AS fragment_rows, (SELECT min(score) FROM fragments) AS fragment_floor
FROM (
  SELECT * FROM nearest UNION ALL SELECT * FROM fragments
) r
${order}`;
    // No comparison with the cursor here: each window holds only rows after it (fromCursor).
    return { sql, bindings: [...nearest.bindings, ...fragments.bindings, input.limit + 1] };
  }

  const where = [...filters];
  const bindings = [...filterBindings];
  if (match.kind === 'identifier') {
    where.unshift('(c.fiscal_code = ? OR c.vat_number = ?)');
    bindings.unshift(match.code, match.code);
  }
  const sql = `
SELECT r.* FROM (
  SELECT ${COLUMNS},
         ${constantScore}::numeric AS score, 0::numeric AS closeness, coalesce(c.legal_name, '') AS sort_name
  FROM companies c
  ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
) r
${afterSql}
${order}`;
  return { sql, bindings: [...bindings, ...after, input.limit + 1] };
}

function toItem(r: Row): CompanySearchItem {
  return {
    id: String(r.id),
    fiscalCode: r.fiscal_code,
    vatNumber: r.vat_number,
    legalName: r.legal_name,
    legalForm: r.legal_form,
    naceCode: r.nace_code,
    naceSection: r.nace_section,
    province: r.province,
    municipality: r.municipality,
    size: r.size,
    status: r.dissolution_year === null ? 'active' : 'dissolved',
    dissolutionYear: r.dissolution_year,
    latestFiledYear: r.latest_filed_year,
    latestRevenue: r.latest_revenue,
    latestEmployees: r.latest_employees,
    score: Number(r.score),
  };
}
