// npm run bench:search [-- --count 1000000 --reps 20 --compare --before-reps 3 --keep]
//
// The company search (core/companies/search-companies.ts, the MCP search tool's) on a
// production-size table: Italy has ~6 million registered companies, the sample data 2,000.
// Into a FRESH scratch database (a new database on DATABASE_URL's server, or an embedded
// PostgreSQL in a temporary folder when DATABASE_URL is unset), migrated: N synthetic companies
// (bench/synthetic-companies.ts: real comuni, Roma and Milano ~5 % each), then searchCompanies
// itself, timed per call, for searches by filters alone (a big and a small comune, a province, a
// NACE section, a status, none), by a name alone (common words, a short one, a typo) and by
// filters and a name, each on its first page and on the page after its first 200 rows (a
// cursor). Prints p50/p95 ms over --reps calls after two warm-ups, and the size of the indexes
// of migrations 037, 038 and 040 and their build times; figures only, no pass/fail.
//
// The rows are loaded without those indexes, which are then built (faster than maintaining them
// row by row). --compare also times the searches before that build (with --before-reps calls
// each, as they read the whole table): the figures without the indexes.
import { parseArgs } from 'node:util';
import * as searchOrderMigration from '../migrations/20261127_037_company_search_order.js';
import * as nameNearestMigration from '../migrations/20261127_038_company_name_nearest.js';
import * as nameFoldedMigration from '../migrations/20261128_040_names_folded.js';
import { searchCompanies, searchCompaniesInputSchema, type SearchCompaniesInput } from '../core/companies/search-companies.js';
import { migrateLatest } from '../core/db/index.js';
import { fmt, machineLoad, openSearchStore, timeCalls } from './search-store.js';
import { insertSyntheticCompanies } from './synthetic-companies.js';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    reps: { type: 'string', default: '20' },
    compare: { type: 'boolean', default: false },
    'before-reps': { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  process.stdout.write('usage: npm run bench:search -- [--count N=1000000] [--reps N=20] [--compare] [--before-reps N=3] [--keep]\n'
    + '  --compare also times the searches without the indexes of migrations 037, 038 and 040, --before-reps calls each.\n'
    + '  --keep leaves the scratch database in place for inspection (EXPLAIN).\n');
  process.exit(0);
}
const count = Number(args.count);
const log = (line: string) => process.stderr.write(`[bench:search] ${line}\n`);

const CASES: Array<[string, Partial<SearchCompaniesInput>]> = [
  ['municipality Roma', { municipality: 'Roma' }],
  ['municipality Cantu (small)', { municipality: 'Cantu' }],
  ['municipality Roma, active', { municipality: 'Roma', status: 'active' }],
  ['"Rossi Costruzioni"', { query: 'Rossi Costruzioni' }],
  ['"Ferrari"', { query: 'Ferrari' }],
  ['"Costruzioni"', { query: 'Costruzioni' }],
  ['"Ros" (3 letters)', { query: 'Ros' }],
  ['"Feraril" (typo, none similar enough)', { query: 'Feraril' }],
  ['"Ferari" (typo)', { query: 'Ferari' }],
  ['municipality Milano + "Ferrari"', { municipality: 'Milano', query: 'Ferrari' }],
  ["municipality L'Aquila + \"Rossi Costruzioni\"", { municipality: "l'aquila", query: 'Rossi Costruzioni' }],
  ['province RM', { province: 'RM' }],
  ['province IS (small)', { province: 'IS' }],
  ['province MI, NACE C', { province: 'MI', naceSection: 'C' }],
  ['NACE section G', { naceSection: 'G' }],
  ['status dissolved', { status: 'dissolved' }],
  ['no filters', {}],
];

const store = await openSearchStore({ prefix: 'bench_search', keep: args.keep, log });
const { db, deps } = store;

try {
  await migrateLatest(db);
  await nameFoldedMigration.down(db);
  await nameNearestMigration.down(db);
  await searchOrderMigration.down(db);
  log(`scratch database ready (${store.description}); ${machineLoad()}`);
  let started = performance.now();
  await insertSyntheticCompanies(db, count);
  log(`${fmt(count)} companies in ${fmt((performance.now() - started) / 1000, 1)} s`);

  const lines: string[] = [];
  if (args.compare) lines.push(...await timeCases('without migrations 037, 038 and 040', Number(args['before-reps'])));
  started = performance.now();
  await searchOrderMigration.up(db);
  const built = [`migration 037's indexes built in ${fmt((performance.now() - started) / 1000, 1)} s`];
  started = performance.now();
  await nameNearestMigration.up(db);
  built.push(`migration 038's in ${fmt((performance.now() - started) / 1000, 1)} s`);
  started = performance.now();
  await nameFoldedMigration.up(db);
  built.push(`migration 040's in ${fmt((performance.now() - started) / 1000, 1)} s`);
  await db.raw('ANALYZE companies');
  log(built.join(', '));
  lines.push(...await timeCases('with migrations 037, 038 and 040', Number(args.reps)));

  const { rows: sizes } = await db.raw<{ rows: Array<{ name: string; mb: number }> }>(`
    SELECT indexrelname AS name, round(pg_relation_size(indexrelid) / 1e6)::int AS mb FROM pg_stat_user_indexes
    WHERE relname = 'companies' ORDER BY indexrelname`);
  const { rows: [table] } = await db.raw<{ rows: Array<{ mb: number }> }>("SELECT round(pg_relation_size('companies') / 1e6)::int AS mb");
  process.stdout.write([
    '',
    `company search over ${fmt(count)} companies, ms per call (searchCompanies, limit 10):`,
    ...lines,
    `companies table ${table!.mb} MB; its indexes: ${sizes.map((s) => `${s.name} ${s.mb} MB`).join(', ')}`,
    `${built.join(', ')} (CONCURRENTLY)`,
    `machine: ${machineLoad()} (other work on the machine slows the figures)`,
    '',
  ].join('\n'));
} finally {
  await store.close();
}

async function timeCases(label: string, reps: number): Promise<string[]> {
  const out = [`  ${label}: ${'p50'.padStart(9)} ${'p95'.padStart(9)}   (first page | page after 200 rows)`];
  for (const [name, raw] of CASES) {
    const input = searchCompaniesInputSchema.parse({ limit: 10, ...raw });
    // The cursor after the first 200 rows, as a caller paging through would hold it.
    let next: string | null = null;
    for (let page = 0; page < 4; page++) {
      next = (await searchCompanies(deps, { ...input, limit: 50, cursor: next ?? undefined })).nextCursor;
      if (next === null) break;
    }
    const time = (cursor: string | undefined) => timeCalls(() => searchCompanies(deps, { ...input, cursor }), reps, 2, 2);
    const figures = [await time(undefined), next === null ? '(fewer than 200 rows)' : await time(next)];
    out.push(`    ${name.padEnd(44)} ${figures.join(' | ')}`);
  }
  return out;
}
