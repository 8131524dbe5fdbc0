// npm run bench:people [-- --count 1000000 --reps 10 --keep]
//
// The people search (core/companies/search-people.ts, the MCP service_search_people tool's) on a
// production-size store: Italy has ~6 million registered companies; --count synthetic ones
// (bench/synthetic-companies.ts) with two officers and one or two shareholders each
// (bench/synthetic-people.ts, ~3.5 people rows a company), into a FRESH scratch database (a new
// database on DATABASE_URL's server, or an embedded PostgreSQL in a temporary folder when
// DATABASE_URL is unset), migrated. Then searchPeople itself, timed per call: the commonest
// surname alone, a full name in either order, accents left out of a short and a long name, a
// typo, the shortest name allowed, one word looked up with and without an elision, and the page
// after the first 50 people. Prints p50/p95 ms over --reps calls after a warm-up, and each
// search's first answer (which name, its score, how many roles): figures and answers only, no
// pass/fail.
import { parseArgs } from 'node:util';
import { searchPeople, searchPeopleInputSchema, type SearchPeopleInput } from '../core/companies/search-people.js';
import { migrateLatest } from '../core/db/index.js';
import { fmt, machineLoad, openSearchStore, timeCalls } from './search-store.js';
import { insertSyntheticCompanies } from './synthetic-companies.js';
import { insertSyntheticPeople } from './synthetic-people.js';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    reps: { type: 'string', default: '10' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  process.stdout.write('usage: npm run bench:people -- [--count N=1000000] [--reps N=10] [--keep]\n'
    + '  --count companies (about 3.5 people rows each); --keep leaves the scratch database in place for inspection (EXPLAIN).\n');
  process.exit(0);
}
const count = Number(args.count);
const reps = Number(args.reps);
const log = (line: string) => process.stderr.write(`[bench:people] ${line}\n`);

const CASES: Array<[string, Partial<SearchPeopleInput>]> = [
  ['"Rossi" (the commonest surname)', { name: 'Rossi' }],
  ['"Mario Rossi"', { name: 'Mario Rossi' }],
  ['"Rossi Mario" (surname first)', { name: 'Rossi Mario' }],
  ['"Rossi", officers, directors', { name: 'Rossi', roleCategory: 'director' }],
  ['"Giuseppe Bianchini"', { name: 'Giuseppe Bianchini' }],
  ['"Pirrò Niccolò"', { name: 'Pirrò Niccolò' }],
  ['"pirro niccolo" (accents left out)', { name: 'pirro niccolo' }],
  ['"Luca Cantù"', { name: 'Luca Cantù' }],
  ['"luca cantu" (short, accents left out)', { name: 'luca cantu' }],
  ['"Rosi Mario" (typo)', { name: 'Rosi Mario' }],
  ['"Ro" (two letters, the least allowed)', { name: 'Ro' }],
  ['"Davide" (one word, as an elision begins: also "D\'avide")', { name: 'Davide' }],
  ['"D\'Amico" (one word with an elision: also "DAmico")', { name: "D'Amico" }],
];

const store = await openSearchStore({ prefix: 'bench_people', keep: args.keep, log });
const { db, deps } = store;

try {
  await migrateLatest(db);
  log(`scratch database ready (${store.description}); ${machineLoad()}`);
  let started = performance.now();
  await insertSyntheticCompanies(db, count);
  log(`${fmt(count)} companies in ${fmt((performance.now() - started) / 1000, 1)} s`);
  started = performance.now();
  const people = await insertSyntheticPeople(db);
  log(`${fmt(people)} people rows (officers and shareholders), their name indexes built, in ${fmt((performance.now() - started) / 1000, 1)} s`);

  const lines = [`  ${'search'.padEnd(42)} ${'p50'.padStart(9)} ${'p95'.padStart(9)}   (first page | page after 50 people)   first answer`];
  for (const [name, raw] of CASES) {
    const input = searchPeopleInputSchema.parse({ limit: 10, ...raw });
    let next: string | null = null;
    for (let page = 0; page < 2; page++) {
      next = (await searchPeople(deps, { ...input, limit: 25, cursor: next ?? undefined })).nextCursor;
      if (next === null) break;
    }
    const first = (await searchPeople(deps, input)).people[0];
    const time = (cursor: string | undefined) => timeCalls(() => searchPeople(deps, { ...input, cursor }), reps, 1, 1);
    const figures = [await time(undefined), next === null ? '(fewer than 50 people)' : await time(next)];
    const answer = first ? `${first.name} (${first.score}, ${fmt(first.roleCount)} roles)` : 'nobody';
    lines.push(`  ${name.padEnd(42)} ${figures.join(' | ')}   ${answer}`);
  }
  const { rows: sizes } = await db.raw<{ rows: Array<{ name: string; mb: number }> }>(`
    SELECT indexrelname AS name, round(pg_relation_size(indexrelid) / 1e6)::int AS mb FROM pg_stat_user_indexes
    WHERE indexrelname IN ('company_officers_name_trgm_idx', 'company_holders_name_trgm_idx') ORDER BY indexrelname`);
  process.stdout.write([
    '',
    `people search over ${fmt(people)} officers and shareholders of ${fmt(count)} companies, ms per call (searchPeople, limit 10):`,
    ...lines,
    `name indexes: ${sizes.map((s) => `${s.name} ${s.mb} MB`).join(', ')}`,
    `machine: ${machineLoad()} (other work on the machine slows the figures)`,
    '',
  ].join('\n'));
} finally {
  await store.close();
}
