import type { Knex } from 'knex';
import { loadReferenceData } from '../core/sample-data/index.js';

// A production-size companies table in seconds, for measuring search: rows written by one
// INSERT ... SELECT generate_series, not imported dossiers (bench:import measures the import).
// Only the columns the search reads or filters on are filled. Municipalities are the real comuni
// (data/reference, accents and apostrophes included: Cantù, Forlì, L'Aquila) weighted by
// population to the power 1.05, Milano doubled, so that Roma and Milano hold about 5 % of the
// companies each and a small comune a handful; about 8 % are stored in capitals as registries
// write them. Names repeat words from short lists, as real names do ("Rossi Costruzioni").
// random() is seeded: the same count gives the same table.

const PREFIXES = ['Rossi', 'Bianchi', 'Russo', 'Ferrari', 'Esposito', 'Romano', 'Colombo', 'Ricci', 'Marino', 'Greco', 'Bruno', 'Gallo',
  'Conti', 'De Luca', 'Mancini', 'Costa', 'Giordano', 'Rizzo', 'Lombardi', 'Moretti', 'Barbieri', 'Fontana', 'Santoro', 'Mariani',
  'Rinaldi', 'Caruso', 'Ferrara', 'Galli', 'Martini', 'Leone', 'Longo', 'Gentile', 'Martinelli', 'Vitale', 'Lombardo', 'Serra',
  'Coppola', 'De Santis', "D'Angelo", 'Marchetti', 'Parisi', 'Villa', 'Conte', 'Ferraro', 'Ferri', 'Fabbri', 'Bianco', 'Marini',
  'Grasso', 'Valentini', 'Alfa', 'Nuova', 'Euro', 'Tecno', 'Edil', 'Agri', 'Italia', 'Global', 'Studio', 'Gruppo'];
const ACTIVITIES = ['Costruzioni', 'Impianti', 'Servizi', 'Trasporti', 'Commercio', 'Immobiliare', 'Consulting', 'Alimentari', 'Meccanica',
  'Elettronica', 'Informatica', 'Arredamenti', 'Tessile', 'Logistica', 'Ristorazione', 'Farmacia', 'Autoricambi', 'Edilizia', 'Energia',
  'Ceramiche', 'Vini', 'Carni', 'Marmi', 'Legnami', 'Plastica', 'Ottica', 'Calzature', 'Gioielli', 'Turismo', 'Pulizie'];
const SUFFIX: Record<string, string> = { SRL: 'S.r.l.', SRLS: 'S.r.l.s.', SPA: 'S.p.A.', SNC: 'S.n.c.', SAS: 'S.a.s.', DI: '' };
// Per 100 companies.
const LEGAL_FORMS: Array<[string, number]> = [['SRL', 45], ['DI', 30], ['SNC', 9], ['SAS', 9], ['SRLS', 5], ['SPA', 2]];
const NACE_SECTIONS: Array<[string, string, number]> = [['G', '47', 24], ['F', '43', 13], ['C', '25', 11], ['I', '56', 8], ['M', '70', 7],
  ['L', '68', 6], ['A', '01', 6], ['S', '96', 5], ['N', '82', 4], ['Q', '86', 3], ['H', '49', 3], ['J', '62', 3], ['K', '64', 2],
  ['R', '93', 2], ['P', '85', 1], ['E', '38', 1], ['D', '35', 1]];
const SIZES: Array<[string, number]> = [['micro', 85], ['small', 11], ['medium', 3], ['large', 1]];

const spread = <T>(weighted: Array<[T, number]>): T[] => weighted.flatMap(([value, n]) => Array<T>(n).fill(value));
const sqlArray = (values: string[]) => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}]::text[]`;

/** Fills `companies` (which should be empty) with `count` synthetic rows, then ANALYZEs it. */
export async function insertSyntheticCompanies(db: Knex, count: number): Promise<void> {
  const comuni = loadReferenceData().comuni.map((c) => ({ name: c.name, province: c.sigla, weight: c.population ** 1.05 * (c.name === 'Milano' ? 2 : 1) }));
  const forms = spread(LEGAL_FORMS.map(([f, n]) => [f, n]));
  const sections = spread(NACE_SECTIONS.map(([s, d, n]) => [`${s}${d}`, n]));
  const sizes = spread(SIZES);
  await db.transaction(async (tx) => {
    await tx.raw('SELECT setseed(0.20261127)');
    await tx.raw(`CREATE TEMP TABLE bench_comuni ON COMMIT DROP AS
      SELECT name, province, sum(weight) OVER (ORDER BY name, province) / sum(weight) OVER () AS upto
      FROM json_to_recordset(?::json) AS c(name text, province text, weight float8)`, [JSON.stringify(comuni)]);
    await tx.raw('CREATE INDEX ON bench_comuni (upto)');
    await tx.raw('ANALYZE bench_comuni');
    await tx.raw(`
      INSERT INTO companies (fiscal_code, vat_number, legal_name, legal_form, nace_section, nace_code, province, municipality, size,
                             dissolution_year, latest_filed_year, latest_revenue, latest_employees, source)
      SELECT lpad(g.i::text, 11, '0'), lpad(g.i::text, 11, '0'),
             CASE WHEN g.r_name < 0.005 THEN NULL
                  ELSE rtrim(prefixes[1 + floor(g.r_prefix * cardinality(prefixes))::int] || ' '
                    || activities[1 + floor(g.r_activity * cardinality(activities))::int] || ' '
                    || (${sqlArray(forms.map((f) => SUFFIX[f] ?? ''))})[1 + floor(g.r_form * 100)::int]) END,
             (${sqlArray(forms)})[1 + floor(g.r_form * 100)::int],
             left(sections[1 + floor(g.r_section * 100)::int], 1),
             right(sections[1 + floor(g.r_section * 100)::int], 2) || '.' || lpad(floor(g.r_name * 100)::int::text, 2, '0'),
             m.province,
             CASE WHEN g.r_caps < 0.08 THEN upper(m.name) ELSE m.name END,
             (${sqlArray(sizes)})[1 + floor(g.r_size * 100)::int],
             CASE WHEN g.r_dissolved < 0.15 THEN 2000 + floor(g.r_size * 24)::int END,
             2020 + floor(g.r_dissolved * 5)::int,
             floor(g.r_size * g.r_size * 5e7)::bigint,
             floor(g.r_size * g.r_size * 200)::int,
             'bench-synthetic'
      FROM (SELECT i, random() AS r_municipality, random() AS r_name, random() AS r_prefix, random() AS r_activity, random() AS r_form,
                   random() AS r_section, random() AS r_caps, random() AS r_size, random() AS r_dissolved
            FROM generate_series(1, ?::int) AS i) g
      CROSS JOIN LATERAL (SELECT name, province FROM bench_comuni WHERE upto >= g.r_municipality ORDER BY upto LIMIT 1) m
      CROSS JOIN (SELECT ${sqlArray(PREFIXES)} AS prefixes, ${sqlArray(ACTIVITIES)} AS activities, ${sqlArray(sections)} AS sections) w`, [count]);
  });
  await db.raw('VACUUM ANALYZE companies');
}
