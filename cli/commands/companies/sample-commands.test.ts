import { existsSync } from 'node:fs';
import { access, chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FISCAL_YEARS } from '../../../core/companies/schemas/index.js';
import { createDb, type Db } from '../../../core/db/index.js';
import { generateDossiers, LATEST_YEAR_RANGE, MAX_SAMPLE_COMPANIES } from '../../../core/sample-data/index.js';
import { runCli } from '../../../test/support/run-cli.js';

// The real CLI in a child process: `sample generate` writes a file, `import` reads it back.
const databaseUrl = inject('databaseUrl');
let db: Db;
let dir: string;

const cli = (...args: string[]) => runCli(databaseUrl, ...args);
const exists = (file: string) => access(file).then(() => true, () => false);

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'sample-commands-'));
});
afterAll(async () => {
  await db?.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('cli sample generate', () => {
  it('when --count is above what distinct VAT numbers allow then it is refused naming the bound, and no file is written', async () => {
    const file = path.join(dir, 'too-many.jsonl');
    const run = await cli('sample', 'generate', '--count', String(MAX_SAMPLE_COMPANIES + 1), '--out', file);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toContain(`error: option '--count <n>' argument '${MAX_SAMPLE_COMPANIES + 1}' is invalid. at most 9999999: each company needs a VAT number of its own`);
    expect(await exists(file)).toBe(false);
    // The generator holds to it too (SAMPLE_COMPANIES for npm start reaches it without the option).
    expect(() => generateDossiers({ count: MAX_SAMPLE_COMPANIES + 1, seed: 1 }).next()).toThrow(/^count must be at most 9999999 /);
  });

  it('when --latest-year would give years the import refuses then it is refused naming the range, and no file is written', async () => {
    const years = [1700, LATEST_YEAR_RANGE.min - 1, LATEST_YEAR_RANGE.max + 1, 2300];
    const runs = await Promise.all(years.map((year) => cli('sample', 'generate', '--count', '5', '--latest-year', String(year), '--out', path.join(dir, `refused-${year}.jsonl`))));
    for (const [i, run] of runs.entries()) {
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toContain(`error: option '--latest-year <year>' argument '${years[i]}' is invalid. must be a year from ${LATEST_YEAR_RANGE.min} to ${LATEST_YEAR_RANGE.max}, `
        + `so that every year written is one \`cli import\` takes`);
      expect(await exists(path.join(dir, `refused-${years[i]}.jsonl`))).toBe(false);
    }
    const help = await cli('sample', 'generate', '--help');
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(`most recent fiscal year with filed accounts, ${LATEST_YEAR_RANGE.min} to ${LATEST_YEAR_RANGE.max}`);
  });

  it.each([
    ['in a folder that does not exist', async () => path.join(dir, 'no-such-folder', 'sample.jsonl'), 'no such directory'],
    ['a folder', async () => dir, 'it is a directory'],
    ['under a file, as if it were a folder', async () => path.join(dir, 'latest-1.jsonl', 'sample.jsonl'), 'a part of its path is not a directory'],
    // root writes anywhere, whatever the permissions.
    ...(process.getuid?.() === 0 ? [] : [['in a folder without write permission', async () => {
      const folder = path.join(dir, 'read-only');
      await mkdir(folder, { recursive: true });
      await chmod(folder, 0o500);
      return path.join(folder, 'sample.jsonl');
    }, 'permission denied'] as const]),
    // A full disk: the first writes fail, after the file was opened.
    ...(existsSync('/dev/full') ? [['on a full disk', async () => '/dev/full', 'no space left on device'] as const] : []),
  ] as const)('when --out is %s then one line says why in the words import\'s --rejects uses, not a Node error code', async (_name, outPath, why) => {
    if (why === 'a part of its path is not a directory') await cli('sample', 'generate', '--count', '1', '--out', path.join(dir, 'latest-1.jsonl'));
    const out = await outPath();
    const run = await cli('sample', 'generate', '--count', '50', '--out', out);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    // Was "error: ENOENT: no such file or directory, open '…'" (EISDIR, EACCES, ENOSPC alike).
    expect(run.stderr.trim()).toBe(`error: cannot write ${out}: ${why}`);
  });

  it('when --latest-year is either end of its range then the file written imports with no line rejected, its years reaching to the import\'s bounds', async () => {
    const ends = [
      { latestYear: LATEST_YEAR_RANGE.min, seed: 81_240_001, options: [] },
      { latestYear: LATEST_YEAR_RANGE.max, seed: 81_240_002, options: ['--with-changes'] },
    ];
    for (const { latestYear, seed, options } of ends) {
      const file = path.join(dir, `latest-${latestYear}.jsonl`);
      const generated = await cli('sample', 'generate', '--count', '400', '--seed', String(seed), '--latest-year', String(latestYear), ...options, '--out', file);
      expect(generated.code, generated.stderr).toBe(0);

      const run = await cli('import', file, '--workers', '0', '--quiet');
      expect(run.stdout).toMatch(/^imported 400 lines in .*: 400 created, 0 updated, 0 unchanged, 0 rejected\n$/);
      expect(run.code).toBe(0);

      const codes = (await readFile(file, 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { fiscalCode: string }).fiscalCode);
      const { rows: [stored] } = await db.raw<{ rows: { oldest: number; newest: number; founded: number }[] }>(
        `SELECT min(y.year) AS oldest, max(y.year) AS newest, min(c.founding_year) AS founded
           FROM companies c JOIN company_years y ON y.company_id = c.id WHERE c.fiscal_code = ANY(?)`, [codes]);
      // What makes these the ends: a forecast year on the import's last fiscal year, or fiscal
      // years and founding years decades before the latest year, near the import's first ones.
      if (latestYear === LATEST_YEAR_RANGE.max) expect(stored!.newest).toBe(FISCAL_YEARS.max);
      else expect(stored).toMatchObject({ oldest: expect.toSatisfy((y: number) => y >= FISCAL_YEARS.min && y <= FISCAL_YEARS.min + 10), founded: expect.toSatisfy((y: number) => y < FISCAL_YEARS.min) });
    }
  });
});
