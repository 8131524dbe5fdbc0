import type { Knex } from 'knex';

// Officers and natural-person shareholders for the synthetic companies (synthetic-companies.ts),
// for measuring the people search: two officers and one or two shareholders a company, written by
// INSERT ... SELECT over the companies, not imported dossiers. Surnames as Italy's are spread: the
// twenty commonest (Rossi, Russo, Ferrari, ...) in 3 % of the rows, Rossi in 0.4 %, and the rest
// spread over 13,800 made of stems, middles and endings, a sixth of them ending in an accented
// vowel (Cantù, Lucà, Pirrò); first names from a list (Niccolò and Nicolò among them). Half the
// rows are written as registries write names, "CANTU' LUCA" (capitals, surname first, an
// apostrophe for an accent), half as people do, "Luca Cantù". random() is seeded: the same
// companies give the same people.

const COMMONEST = ['Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi', 'Romano', 'Colombo', 'Ricci', 'Marino', 'Greco', 'Bruno',
  'Gallo', 'Conti', 'De Luca', 'Mancini', 'Costa', 'Giordano', 'Rizzo', 'Lombardi', 'Moretti'];
const COMMONEST_SHARE = 0.03;
// The k-th commonest in proportion to 1/sqrt(k): Rossi about 0.4 % of the rows, Moretti 0.09 %.
const weights = COMMONEST.map((_, k) => 1 / Math.sqrt(k + 1));
const total = weights.reduce((sum, w) => sum + w, 0);
const THRESHOLDS = weights.map((_, k) => weights.slice(0, k).reduce((sum, w) => sum + w, 0) / total);
const STEMS = ['Ross', 'Bianch', 'Russ', 'Ferr', 'Espos', 'Rom', 'Colomb', 'Ricc', 'Mar', 'Grec', 'Brun', 'Gall', 'Cont', 'Manc', 'Cost',
  'Giord', 'Rizz', 'Lomb', 'Mor', 'Barb', 'Font', 'Sant', 'Rin', 'Car', 'Mart', 'Leon', 'Long', 'Gent', 'Vit', 'Serr', 'Copp', 'Par',
  'Vill', 'Fabbr', 'Grass', 'Valent', 'Pell', 'Sorr', 'Cap', 'Amat', 'Bell', 'Bert', 'Cam', 'Cer', 'Dal', 'Fior', 'Guerr', 'Lucch',
  'Mast', 'Negr', 'Orl', 'Pag', 'Pirr', 'Sal', 'Tamb', 'Ven', 'Zan', 'Cant', 'Luc', 'Mond'];
const MIDDLES = ['', 'an', 'ell', 'ett', 'ol', 'ar', 'in', 'ucc', 'ald', 'ign'];
const ENDINGS = ['i', 'o', 'a', 'ini', 'etti', 'ello', 'elli', 'one', 'oni', 'ucci', 'ato', 'ari', 'esi', 'otti', 'uzzi', 'ì', 'ò', 'ù', 'à',
  'ino', 'ese', 'ardi', 'oli'];
const SURNAMES = [...COMMONEST, ...STEMS.flatMap((stem) => MIDDLES.flatMap((middle) => ENDINGS.map((ending) => stem + middle + ending)))];
const FIRST_NAMES = ['Giuseppe', 'Mario', 'Luca', 'Giovanni', 'Antonio', 'Francesco', 'Marco', 'Andrea', 'Paolo', 'Alessandro', 'Roberto',
  'Stefano', 'Luigi', 'Salvatore', 'Maria', 'Anna', 'Giulia', 'Francesca', 'Laura', 'Chiara', 'Sara', 'Elena', 'Valentina', 'Paola',
  'Niccolò', 'Nicolò', 'Matteo', 'Davide', 'Simone', 'Federico', 'Lorenzo', 'Alessia', 'Martina', 'Giorgia', 'Silvia', 'Monica',
  'Claudio', 'Massimo', 'Fabio', 'Enrico'];
const ROLES: Array<[string, string]> = [['Amministratore Unico', 'director'], ['Legale Rappresentante', 'legal_representative'],
  ['Consigliere', 'board_member'], ['Sindaco Effettivo', 'statutory_auditor'], ['Procuratore', 'proxy']];

const sqlArray = (values: string[]) => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}]::text[]`;
// As a registry writes a name: capitals, an apostrophe for an accent. The accents go first, as
// upper() keeps "ù" as it is under the C locale.
const ACCENT_TO_APOSTROPHE: Array<[string, string]> = [['à', "A''"], ['ì', "I''"], ['ò', "O''"], ['ù', "U''"]];
const registrySpelling = (expression: string) =>
  `upper(${ACCENT_TO_APOSTROPHE.reduce((sql, [from, to]) => `replace(${sql}, '${from}', '${to}')`, expression)})`;
// A surname: one of the commonest (width_bucket finds its place among their cumulative shares) or
// any of the rest; a first name by a skewed draw (a power of random(): the first ones come up most).
const SURNAME = `w.surnames[CASE WHEN d.r_surname < ${COMMONEST_SHARE}
    THEN width_bucket(d.r_surname / ${COMMONEST_SHARE}, ARRAY[${THRESHOLDS.join(', ')}]::float8[])
    ELSE ${COMMONEST.length + 1} + floor((d.r_surname - ${COMMONEST_SHARE}) / ${1 - COMMONEST_SHARE} * ${SURNAMES.length - COMMONEST.length})::int END]`;
const FIRST_NAME = `w.firsts[1 + floor(power(d.r_first, 1.4) * ${FIRST_NAMES.length})::int]`;
const NAME = `CASE WHEN d.r_style < 0.5 THEN ${registrySpelling(`${SURNAME} || ' ' || ${FIRST_NAME}`)} ELSE ${FIRST_NAME} || ' ' || ${SURNAME} END`;
const DRAWS = 'random() AS r_surname, random() AS r_first, random() AS r_style';
const WORDS = `CROSS JOIN (SELECT ${sqlArray(SURNAMES)} AS surnames, ${sqlArray(FIRST_NAMES)} AS firsts,
  ${sqlArray(ROLES.map(([role]) => role))} AS roles, ${sqlArray(ROLES.map(([, category]) => category))} AS categories) w`;

/** Adds people to every company of `companies` and rebuilds the name indexes; returns how many rows. */
export async function insertSyntheticPeople(db: Knex): Promise<number> {
  // The name indexes are built once the rows are in: faster than maintaining them row by row.
  await db.raw('DROP INDEX IF EXISTS company_officers_name_trgm_idx');
  await db.raw('DROP INDEX IF EXISTS company_holders_name_trgm_idx');
  await db.transaction(async (tx) => {
    await tx.raw('SELECT setseed(0.20261128)');
    await tx.raw(`
      INSERT INTO company_officers (company_id, position, name, role, role_category)
      SELECT d.id, d.position, ${NAME}, w.roles[d.i_role], w.categories[d.i_role]
      FROM (SELECT c.id, o.position, ${DRAWS}, 1 + floor(random() * ${ROLES.length})::int AS i_role
            FROM companies c CROSS JOIN generate_series(0, 1) AS o(position)) d
      ${WORDS}`);
    await tx.raw(`
      INSERT INTO company_holders (company_id, relation, position, name, share, holder_kind)
      SELECT d.id, 'shareholder', d.position, ${NAME}, 1.0 / d.holders, 'person'
      FROM (SELECT c.id, h.position, c.holders, ${DRAWS}
            FROM (SELECT id, CASE WHEN random() < 0.5 THEN 1 ELSE 2 END AS holders FROM companies) c
            CROSS JOIN LATERAL generate_series(0, c.holders - 1) AS h(position)) d
      ${WORDS}`);
  });
  await db.raw('CREATE INDEX company_officers_name_trgm_idx ON company_officers USING gin (name gin_trgm_ops)');
  await db.raw('CREATE INDEX company_holders_name_trgm_idx ON company_holders USING gin (name gin_trgm_ops)');
  await db.raw('VACUUM ANALYZE company_officers');
  await db.raw('VACUUM ANALYZE company_holders');
  const { rows: [counted] } = await db.raw<{ rows: Array<{ n: string }> }>(
    'SELECT (SELECT count(*) FROM company_officers) + (SELECT count(*) FROM company_holders) AS n');
  return Number(counted!.n);
}
