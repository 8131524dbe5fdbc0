import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, openSync } from 'node:fs';
import { chmod, link, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/index.js';
import { COMPANY_YEARS, FISCAL_YEARS, MAX_COUNT } from '../../../core/companies/schemas/index.js';
import { generateDossiers } from '../../../core/sample-data/index.js';
import { fiscalCodes } from '../../../test/support/company-dossiers.js';
import { freePort } from '../../../test/services/free-port.js';
import { runCli, runCliWithEnv, type CliRun } from '../../../test/support/run-cli.js';

// The real CLI in a child process, as an operator runs it in development (node --import tsx):
// the only place the parser threads load through tsx the way they do outside the tests.
const databaseUrl = inject('databaseUrl');
let db: Db;
let dir: string;

const cli = (...args: string[]) => runCli(databaseUrl, ...args);

const cliOptions = () => ({ cwd: fileURLToPath(new URL('../../../', import.meta.url)), env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' } });

/** The real CLI with its standard input a pipe the test writes to; what it printed so far, and its exit. */
function spawnCli(...args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], { ...cliOptions(), stdio: ['pipe', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output.stderr += d.toString()));
  return { child, output, exited: once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]> };
}

// As cli, with standard input redirected from `file` (`cli … < file`).
async function cliWithStdinFrom(file: string, ...args: string[]): Promise<CliRun> {
  const fd = openSync(file, 'r');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], { ...cliOptions(), stdio: [fd, 'pipe', 'pipe'] });
    const output = { stdout: '', stderr: '' };
    child.stdout!.on('data', (d: Buffer) => (output.stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output.stderr += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code: code ?? 1, ...output };
  } finally {
    closeSync(fd);
  }
}

const storedCount = async (codes: string[]) => {
  const { rows } = await db.raw<{ rows: { n: number }[] }>('SELECT count(*)::int AS n FROM companies WHERE fiscal_code = ANY(?)', [codes]);
  return rows[0]!.n;
};

async function until(what: string, condition: () => Promise<boolean> | boolean, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Holds a company in an open transaction that inserted it: a batch naming it waits until release(). */
async function holdCompany(fiscalCode: string) {
  const hold = await db.transaction();
  await hold.raw('INSERT INTO companies (fiscal_code) VALUES (?)', [fiscalCode]);
  const { rows: [holder] } = await hold.raw<{ rows: { pid: number }[] }>('SELECT pg_backend_pid() AS pid');
  let released = false;
  return {
    /** Whether a session (the import's batch) is waiting for the held company. */
    waitedFor: async () => {
      const { rows } = await db.raw<{ rows: { n: number }[] }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))', [holder!.pid]);
      return rows[0]!.n > 0;
    },
    release: async () => {
      if (released) return;
      released = true;
      await hold.rollback();
    },
  };
}

// As cli, with `input` piped to its standard input.
async function cliWithStdin(input: Buffer, ...args: string[]): Promise<CliRun> {
  const { child, output, exited } = spawnCli(...args);
  child.stdin.end(input);
  const [code] = await exited;
  return { code: code ?? 1, ...output };
}

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'import-command-'));
});
afterAll(async () => {
  await db?.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('cli import', () => {
  it('when a file is imported with --workers 2 then parser threads parse it, bad lines are reported by number and the rest land', async () => {
    const dossiers = [...generateDossiers({ count: 300, seed: 81_200_201 })];
    const lines = dossiers.map((d) => JSON.stringify(d));
    lines.splice(149, 0, '{"fiscalCode": "00905811006",'); // line 150
    lines.splice(250, 0, JSON.stringify({ fiscalCode: '123', legalName: 'X' })); // line 251
    const file = path.join(dir, 'companies.jsonl');
    const rejects = path.join(dir, 'rejects.jsonl');
    await writeFile(file, lines.join('\n') + '\n');

    const run = await cli('import', file, '--workers', '2', '--batch-size', '50', '--rejects', rejects, '--quiet');
    expect(run.stderr).not.toMatch(/parser threads unavailable/);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/imported 302 lines in .*2 parser threads\): 300 created, 0 updated, 0 unchanged, 2 rejected/);
    expect(run.stdout).toMatch(/^line 150: invalid JSON/m);
    expect(run.stdout).toMatch(/^line 251: fiscalCode: /m);

    const codes = dossiers.map((d) => d.fiscalCode);
    const { rows } = await db.raw<{ rows: { n: number }[] }>('SELECT count(*)::int AS n FROM companies WHERE fiscal_code = ANY(?)', [codes]);
    expect(rows[0]!.n).toBe(300);
  });

  it.each([
    ['--workers 0', false, ['--workers', '0']],
    ['default workers', false, []],
    ['stdin, default workers', true, []],
  ] as const)('when lines that are Latin-1, CRLF, led by a BOM or unterminated are rejected (%s) then --rejects holds their exact bytes, each with its own line end', async (name, stdin, workers) => {
    // Over 1 MB of good companies, so that by default parser threads parse the file.
    const good = [...generateDossiers({ count: 100, seed: 81_200_205 })].map((d) => Buffer.from(JSON.stringify(d) + '\n'));
    const bad = [
      Buffer.from('\uFEFF' + JSON.stringify({ fiscalCode: '1', legalName: 'BOM S.r.l.' }) + '\r\n'), // line 1
      Buffer.from(JSON.stringify({ fiscalCode: '01234567897', legalName: 'Caffè Forlì S.r.l.' }) + '\n', 'latin1'), // line 52
      Buffer.from(JSON.stringify({ fiscalCode: '123', legalName: 'CRLF S.r.l.' }) + '\r\n'), // line 103
      Buffer.from(JSON.stringify({ fiscalCode: '456', legalName: 'Ultimo' }), 'latin1'), // line 104, no line break
    ];
    const input = Buffer.concat([bad[0]!, ...good.slice(0, 50), bad[1]!, ...good.slice(50), bad[2]!, bad[3]!]);
    const file = path.join(dir, `rejects-as-read-${name.replace(/\W+/g, '-')}.jsonl`);
    const rejects = `${file}.rejects`;
    await writeFile(file, input);

    const run = stdin ? await cliWithStdin(input, 'import', '-', '--rejects', rejects, '--quiet') : await cli('import', file, ...workers, '--rejects', rejects, '--quiet');
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toMatch(new RegExp(`imported 104 lines in .*${workers.length > 0 ? '/s\\)' : 'parser threads?\\)'}: .*, 4 rejected`));
    expect(run.stdout).toMatch(/^line 52: not UTF-8 text: /m);
    const written = await readFile(rejects);
    const expected = Buffer.concat([...bad, Buffer.from('\n')]);
    expect(Buffer.compare(written, expected), written.toString('latin1')).toBe(0);

    // Imported again, the rejects file's lines are the same lines: the BOM does not hide line 1's reason.
    const again = await cli('import', rejects, '--workers', '0', '--quiet');
    expect(again.stdout).toMatch(/imported 4 lines in .*: 0 created, 0 updated, 0 unchanged, 4 rejected/);
    expect([...again.stdout.matchAll(/^line (\d): (\w+)/gm)].map((m) => `${m[1]} ${m[2]}`)).toEqual(['1 fiscalCode', '2 not', '3 fiscalCode', '4 fiscalCode']);
  });

  it('when the first batch is held back by the database then the progress line shows only what is written, not what was read', async () => {
    // 300 companies of ~13 kB: four blocks of 1 MB. Batches of 50 with two writers: while the
    // first waits, the second is written and a third is read and filled, so reads are at half
    // the file or more when the first batch lands, and at most two batches are written.
    const dossiers = [...generateDossiers({ count: 300, seed: 81_200_203 })];
    const lines = dossiers.map((d) => JSON.stringify(d) + '\n');
    const file = path.join(dir, 'held-back.jsonl');
    await writeFile(file, lines.join(''));
    const size = Buffer.byteLength(lines.join(''));
    const twoBatches = Buffer.byteLength(lines.slice(0, 100).join(''));

    // The first line's company, inserted by a transaction still open: the import's first batch
    // waits on it. Rolled back, the import then creates it like the others.
    const hold = await db.transaction();
    await hold.raw('INSERT INTO companies (fiscal_code) VALUES (?)', [dossiers[0]!.fiscalCode]);
    const { rows: [holder] } = await hold.raw<{ rows: { pid: number }[] }>('SELECT pg_backend_pid() AS pid');
    const started = Date.now();
    const running = cli('import', file, '--workers', '0', '--batch-size', '50');
    try {
      // Away from a terminal a progress line is drawn at most every 5 s of the process's life,
      // so the first batch is let go after that: the line it draws is the one checked.
      for (;;) {
        const { rows } = await db.raw<{ rows: { n: number }[] }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))', [holder!.pid]);
        if (rows[0]!.n > 0 && Date.now() - started > 6_000) break;
        if (Date.now() - started > 30_000) throw new Error('the import never waited for the held company');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await hold.rollback();
    }
    const run = await running;

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/imported 300 lines in .*: 300 created, 0 updated, 0 unchanged, 0 rejected/);
    const shown = [...run.stderr.matchAll(/^import: (\d+)%, /gm)].map((m) => Number(m[1]));
    expect(shown.length, run.stderr).toBeGreaterThan(0);
    for (const pct of shown) expect(pct).toBeLessThanOrEqual(Math.floor((100 * twoBatches) / size));
  });

  it('when the database holds a batch for long then a progress line still comes every 5 s meanwhile, saying the counts so far', async () => {
    const dossiers = [...generateDossiers({ count: 300, seed: 81_230_001 })];
    const file = path.join(dir, 'held-long.jsonl');
    await writeFile(file, dossiers.map((d) => JSON.stringify(d) + '\n').join(''));
    const hold = await holdCompany(dossiers[0]!.fiscalCode);
    const run = spawnCli('import', file, '--workers', '0', '--batch-size', '50');
    let duringHold: string[];
    try {
      await until('the import waits for the held company', hold.waitedFor);
      const before = run.output.stderr.length;
      // Progress lines come at most 6 s apart (5 s, checked every second): two at least in 12.5 s.
      await new Promise((resolve) => setTimeout(resolve, 12_500));
      duringHold = run.output.stderr.slice(before).split('\n').filter((l) => l.startsWith('import: '));
    } finally {
      await hold.release();
    }
    const [code] = await run.exited;
    expect(code, run.output.stderr).toBe(0);
    // Before, none came while the first batch was held: counts changed only when a batch was written.
    expect(duringHold.length, run.output.stderr).toBeGreaterThanOrEqual(2);
    for (const line of duringHold) expect(line).toMatch(/^import: \d+%, [\d,]+ lines, [\d,]+\/s, ETA /);
    expect(run.output.stdout).toMatch(/imported 300 lines in .*: 300 created, 0 updated, 0 unchanged, 0 rejected/);
  });

  it('when --batch-size is above 5000 then it is refused with the bound and why, and nothing is imported; 5000 is taken', async () => {
    const [dossier] = [...generateDossiers({ count: 1, seed: 81_230_002 })];
    const file = path.join(dir, 'batch-too-big.jsonl');
    await writeFile(file, JSON.stringify(dossier) + '\n');

    // 100000000 made a 226 MB file one transaction, at 871 MB of memory instead of 581.
    const [over, far] = await Promise.all([cli('import', file, '--batch-size', '5001', '--quiet'), cli('import', file, '--batch-size', '100000000', '--quiet')]);
    for (const [run, n] of [[over, 5001], [far, 100_000_000]] as const) {
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toContain(`error: option '--batch-size <n>' argument '${n}' is invalid. at most 5000: a batch's companies are held in memory until it is written, and larger batches write no faster`);
    }
    expect(await storedCount([dossier!.fiscalCode])).toBe(0);

    const most = await cli('import', file, '--batch-size', '5000', '--quiet');
    expect(most.stdout).toMatch(/imported 1 line in .*: 1 created/);
    const help = await cli('import', '--help');
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('--batch-size <n> companies written per database transaction, 1 to 5000');
  });

  it('when a field stored as an integer is out of its bounds then its line is refused naming that field, and nothing of it is written', async () => {
    const nextCode = fiscalCodes();
    const company = (fields: Record<string, unknown>) => ({ fiscalCode: nextCode(), legalName: 'Bounds S.r.l.', ...fields });
    const aids = (fields: Record<string, number>) => ({ stateAids: { count: 0, countLast36Months: 0, amount: 0, amountLast36Months: 0, ...fields } });
    const headcount = (employees: number) => ({ headcount: { employees, asOf: '2024-12-31' } });
    // Each line wrong in one field only, so the reason is that field's and nothing else.
    const refused: [field: string, fields: Record<string, unknown>][] = [
      ['foundingYear', { foundingYear: COMPANY_YEARS.min - 1 }],
      ['dissolutionYear', { dissolutionYear: 300_000_000_000 }],
      ['dissolutionYear', { dissolutionYear: COMPANY_YEARS.min - 1 }],
      ['years[0].year', { years: [{ year: 40_000 }] }],
      ['years[0].employees', { years: [{ year: 2024, employees: 3_000_000_000 }] }],
      ['years[0].employees', { years: [{ year: 2024, employees: -1 }] }],
      ['headcount.employees', headcount(3_000_000_000)],
      ['stateAids.count', aids({ count: 3_000_000_000 })],
      ['stateAids.countLast36Months', aids({ countLast36Months: MAX_COUNT + 1 })],
    ];
    const lines = refused.map(([, fields]) => company(fields));
    // Every bound reached, not passed: the database takes it all.
    const atBounds = company({
      foundingYear: COMPANY_YEARS.min, dissolutionYear: COMPANY_YEARS.max, ...headcount(MAX_COUNT), ...aids({ count: MAX_COUNT, countLast36Months: MAX_COUNT }),
      years: [{ year: FISCAL_YEARS.min, employees: 0 }, { year: FISCAL_YEARS.max, employees: MAX_COUNT }],
    });
    const file = path.join(dir, 'integer-bounds.jsonl');
    await writeFile(file, [...lines, atBounds].map((l) => JSON.stringify(l)).join('\n') + '\n');

    const run = await cli('import', file, '--workers', '0', '--quiet');
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(new RegExp(`imported ${lines.length + 1} lines in .*: 1 created, 0 updated, 0 unchanged, ${lines.length} rejected`));
    refused.forEach(([field], i) => expect(run.stdout).toMatch(new RegExp(`^line ${i + 1}: ${field.replace(/[[\].]/g, '\\$&')}: Too (big|small): [^;]*$`, 'm')));
    expect(run.stdout).not.toMatch(/database refused/);

    const { rows } = await db.raw<{ rows: { fiscal_code: string; latest_employees: number }[] }>(
      'SELECT fiscal_code, latest_employees FROM companies WHERE fiscal_code = ANY(?)', [[...lines, atBounds].map((l) => l.fiscalCode)]);
    expect(rows).toEqual([{ fiscal_code: atBounds.fiscalCode, latest_employees: MAX_COUNT }]);
  });

  it('when a date is in year 0000 or a municipality is longer than any comune\'s name then its line is refused naming the field, not by the database', async () => {
    const nextCode = fiscalCodes();
    const refused: [field: string, reason: string, fields: Record<string, unknown>][] = [
      ['incorporationDate', 'a date from 1800-01-01 to 2100-12-31', { incorporationDate: '0000-06-15' }],
      ['headcount.asOf', 'a date from 1800-01-01 to 2100-12-31', { headcount: { employees: 3, asOf: '0000-06-15' } }],
      ['municipality', 'Too big', { municipality: 'x'.repeat(2_300), legalName: 'y'.repeat(500) }],
    ];
    const lines = refused.map(([, , fields]) => ({ fiscalCode: nextCode(), legalName: 'Dates S.r.l.', ...fields }));
    const atBounds = { fiscalCode: nextCode(), legalName: 'Dates S.r.l.', incorporationDate: '1800-01-01', municipality: 'x'.repeat(100) };
    const file = path.join(dir, 'date-bounds.jsonl');
    await writeFile(file, [...lines, atBounds].map((l) => JSON.stringify(l)).join('\n') + '\n');
    const run = await cli('import', file, '--workers', '0', '--quiet');
    expect(run.code).toBe(2);
    refused.forEach(([field, reason], i) => expect(run.stdout).toMatch(new RegExp(`^line ${i + 1}: ${field.replace(/[[\].]/g, '\\$&')}: ${reason}`, 'm')));
    expect(run.stdout).not.toMatch(/database refused/);
    expect(await storedCount([...lines, atBounds].map((l) => l.fiscalCode))).toBe(1);
  });

  it('when --workers is above twice the CPUs then it is refused with the bound and nothing is imported', async () => {
    const max = 2 * os.availableParallelism();
    const [dossier] = [...generateDossiers({ count: 1, seed: 81_200_202 })];
    const file = path.join(dir, 'too-many-workers.jsonl');
    await writeFile(file, JSON.stringify(dossier) + '\n');

    const [over, far] = await Promise.all([cli('import', file, '--workers', String(max + 1), '--quiet'), cli('import', file, '--workers', '1000', '--quiet')]);
    for (const [run, n] of [[over, max + 1], [far, 1000]] as const) {
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toContain(`error: option '--workers <n>' argument '${n}' is invalid. at most ${max} parser threads (twice this machine's ${max / 2} CPUs)`);
    }
    const { rows } = await db.raw<{ rows: { n: number }[] }>('SELECT count(*)::int AS n FROM companies WHERE fiscal_code = ?', [dossier!.fiscalCode]);
    expect(rows[0]!.n).toBe(0);

    const help = await cli('import', '--help');
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(`--workers <n> parser threads, 0 to ${max} (twice the CPUs)`);
  });

  it('when a producer keeps stdin open and writes a line now and then then each company is in the database seconds after its line, before stdin ends', async () => {
    const [first, second] = [...generateDossiers({ count: 2, seed: 81_200_204 })];
    // Not runCli: stdin must stay open while the database is looked at. Default options, so
    // a line waits for neither a full batch (500) nor a full read-ahead of the parser threads.
    const { child, output, exited } = spawnCli('import', '-', '--quiet');
    const stored = async (fiscalCode: string, withinMs: number) => {
      const deadline = Date.now() + withinMs;
      for (;;) {
        const { rows } = await db.raw<{ rows: { n: number }[] }>('SELECT count(*)::int AS n FROM companies WHERE fiscal_code = ?', [fiscalCode]);
        if (rows[0]!.n === 1) return true;
        if (Date.now() > deadline || child.exitCode !== null) return false;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    try {
      // The first wait also covers the CLI's start (tsx, the parser thread) on a busy machine;
      // the second, once it runs, is the one that says "seconds after its line".
      child.stdin.write(JSON.stringify(first) + '\n');
      expect(await stored(first!.fiscalCode, 20_000), output.stderr).toBe(true);
      child.stdin.write(JSON.stringify(second) + '\n');
      expect(await stored(second!.fiscalCode, 3_000), output.stderr).toBe(true);
      expect(child.exitCode).toBeNull();

      child.stdin.end();
      const [code] = await exited;
      expect(code, output.stderr).toBe(0);
      expect(output.stdout).toMatch(/imported 2 lines in .*: 2 created, 0 updated, 0 unchanged, 0 rejected/);
    } finally {
      if (child.exitCode === null) child.kill();
    }
  });

  it('when the file is a pipe, as a shell\'s <(cat file) gives, then it is read as standard input is, to its end', async () => {
    const dossiers = [...generateDossiers({ count: 5, seed: 81_230_003 })];
    const file = path.join(dir, 'through-a-pipe.jsonl');
    await writeFile(file, dossiers.map((d) => JSON.stringify(d) + '\n').join(''));
    // bash passes the pipe as /dev/fd/63; it was refused: "cannot read /dev/fd/63: not a file".
    const child = spawn('bash', ['-c', `exec "$0" --import tsx cli/main.ts import <(cat "$1") --quiet`, process.execPath, file], { ...cliOptions(), stdio: ['ignore', 'pipe', 'pipe'] });
    const output = { stdout: '', stderr: '' };
    child.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output.stderr += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect({ code, ...output }).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^imported 5 lines in .*: 5 created, 0 updated, 0 unchanged, 0 rejected\n$/) });
    expect(await storedCount(dossiers.map((d) => d.fiscalCode))).toBe(5);
  });

  it('when the file is missing or is a folder then one clear line says so and the exit code is 1', async () => {
    const [missing, folder] = await Promise.all([cli('import', path.join(dir, 'no-such-file.jsonl')), cli('import', dir)]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(`error: cannot read ${path.join(dir, 'no-such-file.jsonl')}: no such file`);
    expect(folder.code).toBe(1);
    expect(folder.stderr.trim()).toBe(`error: cannot read ${dir}: not a file`);
  });

  // What a script running nightly imports acts on (docs/import-format.md, "Exit status").
  describe('exit status', () => {
    // Good companies with a line of bad JSON and one failing the schema among them.
    async function fileWithRejects(name: string) {
      const nextCode = fiscalCodes();
      const good = Array.from({ length: 5 }, () => ({ fiscalCode: nextCode(), legalName: 'Stato S.r.l.' }));
      const bad = ['{"fiscalCode": ', JSON.stringify({ fiscalCode: '123', legalName: 'Corto S.r.l.' })];
      const lines = [good[0], good[1], bad[0], good[2], good[3], bad[1], good[4]].map((l) => (typeof l === 'string' ? l : JSON.stringify(l)));
      const file = path.join(dir, `${name}.jsonl`);
      await writeFile(file, lines.join('\n') + '\n');
      return { file, codes: good.map((g) => g.fiscalCode), bad };
    }

    it('when no line is rejected then the import exits with status 0 and every company is in the database', async () => {
      const nextCode = fiscalCodes();
      const codes = [nextCode(), nextCode(), nextCode()];
      const file = path.join(dir, 'exit-clean.jsonl');
      await writeFile(file, codes.map((fiscalCode) => JSON.stringify({ fiscalCode, legalName: 'Pulito S.r.l.' })).join('\n') + '\n');

      const run = await cli('import', file, '--workers', '0', '--quiet');
      expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(/^imported 3 lines in .*: 3 created, 0 updated, 0 unchanged, 0 rejected\n$/);
      expect(await storedCount(codes)).toBe(3);
    });

    it('when some lines are rejected then the import finishes with status 2, and the other lines are in the database', async () => {
      const { file, codes, bad } = await fileWithRejects('exit-rejected');
      const rejects = `${file}.rejects`;

      const run = await cli('import', file, '--workers', '0', '--rejects', rejects, '--quiet');
      expect(run, run.stderr).toMatchObject({ code: 2, stderr: '' });
      expect(run.stdout).toMatch(/^imported 7 lines in .*: 5 created, 0 updated, 0 unchanged, 2 rejected\nline 3: invalid JSON: .*\nline 6: fiscalCode: .*\n$/);
      expect(await storedCount(codes)).toBe(5);
      expect(await readFile(rejects, 'utf8')).toBe(bad.join('\n') + '\n');
    });

    it('when more than 100 lines are rejected and the output goes to a file or a pipe then every rejected line is listed with its reason', async () => {
      const file = path.join(dir, 'many-rejected.jsonl');
      await writeFile(file, Array.from({ length: 150 }, (_, i) => `{"fiscalCode":"bad${i}"}`).join('\n') + '\n');
      const run = await cli('import', file, '--workers', '0', '--quiet');
      expect(run.code).toBe(2);
      const listed = run.stdout.split('\n').filter((l) => l.startsWith('line '));
      expect(listed).toHaveLength(150);
      expect(listed[149]).toMatch(/^line 150: fiscalCode: /);
      expect(run.stdout).not.toContain('more rejected lines');
    });

    it('when the database cannot be reached then the import exits with status 1, not 2, and nothing is imported', async () => {
      const { file, codes } = await fileWithRejects('exit-unreachable');

      const run = await runCliWithEnv({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/companies`, LOG_LEVEL: 'error' }, 'import', file, '--workers', '0', '--quiet');
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(/^error: cannot reach the database at 127\.0\.0\.1:\d+ \(connection refused\); check DATABASE_URL\n$/);
      expect(await storedCount(codes)).toBe(0);
    });

    it.each([
      ['a value that is not a number', ['--batch-size', 'many'], "error: option '--batch-size <n>' argument 'many' is invalid."],
      ['an unknown option', ['--dry-run'], "error: unknown option '--dry-run'"],
      ['a file that does not exist', ['no-such-file.jsonl'], 'error: cannot read '],
    ])('when the command is given %s then it exits with status 1, not 2, and nothing is imported', async (_what, args, message) => {
      const { file, codes } = await fileWithRejects(`exit-usage-${args[0]!.replace(/\W+/g, '')}`);
      const given = args[0] === 'no-such-file.jsonl' ? [path.join(dir, args[0])] : [file, ...args];

      const run = await cli('import', ...given, '--workers', '0', '--quiet');
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toContain(message);
      expect(await storedCount(codes)).toBe(0);
    });

    it('when the reader of its progress goes away mid-import then the import stops with status 1, not 0: not every line is imported', async () => {
      // Batches of 50; the third waits on a company held by the test until the first progress
      // line is due (away from a terminal, 5 s into the process's life), and that line meets a
      // closed stderr (a log reader that died, `2>&1 | head -1`): the CLI stops there (main.ts).
      const dossiers = [...generateDossiers({ count: 600, seed: 81_200_250 })];
      const codes = dossiers.map((d) => d.fiscalCode);
      const file = path.join(dir, 'exit-reader-gone.jsonl');
      await writeFile(file, dossiers.map((d) => JSON.stringify(d) + '\n').join(''));
      const hold = await holdCompany(codes[100]!);
      const started = Date.now();
      const { child, output, exited } = spawnCli('import', file, '--workers', '0', '--batch-size', '50');
      child.stderr.destroy();
      try {
        // Or it has stopped already: on a busy machine its start can take the 5 s, and the
        // progress line then meets the closed stderr before the import reaches the held company.
        await until('the import waits for the held company, 6 s in, or has stopped', async () => child.exitCode !== null || (Date.now() - started > 6_000 && (await hold.waitedFor())));
      } finally {
        await hold.release();
      }
      const [code, signal] = await exited;

      expect({ code, signal, stdout: output.stdout }).toEqual({ code: 1, signal: null, stdout: '' });
      expect(await storedCount(codes)).toBeLessThan(codes.length);
    });

    it('when --help is asked for then it lists the exit statuses', async () => {
      const help = await cli('import', '--help');
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Exit status .*\n  0 +done, no line rejected\n  2 +done, some lines rejected: the other lines are imported\n  1 +failed or refused/m);
      expect(help.stdout).toMatch(/^  130 +interrupted by Ctrl-C \(143: SIGTERM\)/m);
    });
  });

  describe('--rejects naming the file being imported', () => {
    // One good company, one bad line: the shape of a rejects file being fixed and imported again.
    async function rejectsToFix(name: string) {
      const [good] = [...generateDossiers({ count: 1, seed: 81_200_210 + name.length })];
      const file = path.join(dir, `${name}.jsonl`);
      const content = Buffer.from(`${JSON.stringify(good)}\n{"fiscalCode": "1"}\n`);
      await writeFile(file, content);
      return { file, content, fiscalCode: good!.fiscalCode };
    }

    it.each([
      ['the same path', async (file: string) => file, () => 'the file being imported'],
      ['the same file by another path', async (file: string) => path.join(path.dirname(file), '.', `..${path.sep}${path.basename(path.dirname(file))}`, path.basename(file)), () => 'the file being imported'],
      ['a hard link to it', async (file: string) => {
        await link(file, `${file}.hardlink`);
        return `${file}.hardlink`;
      }, (file: string) => `the file being imported (${file})`],
      ['a symbolic link to it', async (file: string) => {
        await symlink(file, `${file}.symlink`);
        return `${file}.symlink`;
      }, (file: string) => `the file being imported (${file})`],
    ])('when --rejects is %s then it is refused in one line, the file keeps its bytes and nothing is imported', async (name, rejectsPath, what) => {
      const { file, content, fiscalCode } = await rejectsToFix(`rejects-over-input-${name.replace(/\W+/g, '-')}`);
      const rejects = await rejectsPath(file);

      const run = await cli('import', file, '--rejects', rejects, '--quiet');
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr.trim()).toBe(`error: --rejects ${rejects} is ${what(file)}: writing it would empty it before it is read; name another file`);
      expect(Buffer.compare(await readFile(file), content)).toBe(0);
      expect(await storedCount([fiscalCode])).toBe(0);
    });

    it('when standard input is redirected from the file --rejects names then it is refused in one line and the file keeps its bytes', async () => {
      const { file, content, fiscalCode } = await rejectsToFix('rejects-over-stdin');

      const run = await cliWithStdinFrom(file, 'import', '-', '--rejects', file, '--quiet');
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr.trim()).toBe(`error: --rejects ${file} is the file standard input reads: writing it would empty it before it is read; name another file`);
      expect(Buffer.compare(await readFile(file), content)).toBe(0);
      expect(await storedCount([fiscalCode])).toBe(0);
    });
  });

  describe('a --rejects file that cannot be written', () => {
    const oneGoodOneBad = async (name: string) => {
      const [good] = [...generateDossiers({ count: 1, seed: 81_200_220 + name.length })];
      const file = path.join(dir, `${name}.jsonl`);
      await writeFile(file, `{"fiscalCode": "1"}\n${JSON.stringify(good)}\n`);
      return { file, fiscalCode: good!.fiscalCode };
    };

    it.each([
      ['in a folder that does not exist', async () => path.join(dir, 'no-such-folder', 'rejects.jsonl'), 'no such directory'],
      ['a folder', async () => dir, 'it is a directory'],
      // root writes anywhere, whatever the permissions.
      ...(process.getuid?.() === 0 ? [] : [['in a folder without write permission', async () => {
        const folder = path.join(dir, 'read-only');
        await mkdir(folder, { recursive: true });
        await chmod(folder, 0o500);
        return path.join(folder, 'rejects.jsonl');
      }, 'permission denied'] as const]),
    ] as const)('when it is %s then one line says why before any line is imported', async (name, rejectsPath, why) => {
      const { file, fiscalCode } = await oneGoodOneBad(`unwritable-rejects-${name.replace(/\W+/g, '-')}`);
      const rejects = await rejectsPath();

      const run = await cli('import', file, '--rejects', rejects, '--quiet');
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr.trim()).toBe(`error: cannot write the rejects file ${rejects}: ${why}`);
      expect(await storedCount([fiscalCode])).toBe(0);
    });

    it.skipIf(!existsSync('/dev/full'))('when writing it fails part way (a full disk) then the import stops with its summary and one line naming the file and why, and no stack trace', async () => {
      const { file, fiscalCode } = await oneGoodOneBad('rejects-on-a-full-disk');

      const run = await cli('import', file, '--rejects', '/dev/full', '--quiet', '--workers', '0');
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe('error: cannot write the rejects file /dev/full: no space left on device');
      const summary = /^imported \d+ lines? in .*: (\d+) created, 0 updated, 0 unchanged, 1 rejected/m.exec(run.stdout);
      expect(summary, run.stdout).not.toBeNull();
      expect(await storedCount([fiscalCode])).toBe(Number(summary![1]));
    });
  });

  describe('an input that is not JSON Lines in UTF-8', () => {
    const line = () => JSON.stringify({ fiscalCode: '01234567897', legalName: 'Formato S.r.l.' }) + '\r\n';
    const utf16be = (text: string) => Buffer.from(text, 'utf16le').swap16();
    const name = (what: string) => path.join(dir, `not-utf8-${what}`);
    it.each([
      ['gzip', 'export.jsonl.gz', () => gzipSync(line()), (f: string) => `${f} is gzip-compressed: decompress it first, e.g. \`zcat ${f} | cli import -\``],
      ['zip', 'export.zip', () => Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00]), Buffer.alloc(40)]), (f: string) => `${f} is a zip archive: extract it first, e.g. \`unzip -p ${f} | cli import -\``],
      ['UTF-16LE with BOM (PowerShell 5 >)', 'utf16le.jsonl', () => Buffer.from('\uFEFF' + line(), 'utf16le'), (f: string) => `${f} is UTF-16 text: save it as UTF-8, e.g. \`iconv -f UTF-16LE -t UTF-8 ${f} > companies-utf8.jsonl\``],
      ['UTF-16BE with BOM', 'utf16be.jsonl', () => utf16be('\uFEFF' + line()), (f: string) => `${f} is UTF-16 text: save it as UTF-8, e.g. \`iconv -f UTF-16BE -t UTF-8 ${f} > companies-utf8.jsonl\``],
      ['UTF-16LE without BOM', 'utf16le-nobom.jsonl', () => Buffer.from(line(), 'utf16le'), (f: string) => `${f} is UTF-16 text: save it as UTF-8, e.g. \`iconv -f UTF-16LE -t UTF-8 ${f} > companies-utf8.jsonl\``],
      ['UTF-32LE without BOM', 'utf32le-nobom.jsonl', () => Buffer.concat([...line()].map((c) => Buffer.from([c.charCodeAt(0), 0, 0, 0]))), (f: string) => `${f} is UTF-32 text: save it as UTF-8`],
    ])('when the file is %s then one line says so and how to get JSON Lines, and nothing is imported', async (_kind, fileName, content, message) => {
      const file = name(fileName);
      await writeFile(file, content());

      const run = await cli('import', file, '--quiet');
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr.trim()).toBe(`error: ${message(file)}`);
      expect(await storedCount(['01234567897'])).toBe(0);
    });

    it('when standard input is gzip-compressed or UTF-16 then one line says so, before anything is imported', async () => {
      const gz = await cliWithStdin(gzipSync(line()), 'import', '-', '--quiet');
      expect(gz).toMatchObject({ code: 1, stdout: '' });
      expect(gz.stderr.trim()).toBe('error: standard input is gzip-compressed: decompress it first, e.g. `zcat FILE | cli import -`');
      const utf16 = await cliWithStdin(Buffer.from('\uFEFF' + line(), 'utf16le'), 'import', '-', '--quiet');
      expect(utf16).toMatchObject({ code: 1, stdout: '' });
      expect(utf16.stderr.trim()).toMatch(/^error: standard input is UTF-16 text: save it as UTF-8/);
    });
  });

  it('when a small file has CR-only line ends (an old Mac\'s) then its one line is rejected with the hint, not only JSON.parse\'s position', async () => {
    const dossiers = [...generateDossiers({ count: 3, seed: 81_230_004 })];
    const file = path.join(dir, 'cr-only.jsonl');
    await writeFile(file, dossiers.map((d) => JSON.stringify(d) + '\r').join(''));
    const run = await cli('import', file, '--quiet', '--workers', '0');
    expect(run.code).toBe(2);
    // Before, only lines over 4 MiB got the hint; this one (~40 kB) read "invalid JSON: Unexpected non-whitespace character after JSON at position …".
    expect(run.stdout).toMatch(/^imported 1 line in .*: 0 created, 0 updated, 0 unchanged, 1 rejected\n/);
    expect(run.stdout).toMatch(/\nline 1: invalid JSON: Unexpected non-whitespace character after JSON at position \d+ \(CR-only line ends\? the line holds a carriage return followed by more: end lines with "\\n", e\.g\. `tr '\\r' '\\n' < FILE > fixed\.jsonl`\)\n$/);
    // CR LF line ends are fine, and a line of bad JSON without a carriage return gets no hint.
    await writeFile(file, `${JSON.stringify(dossiers[0])}\r\n{"fiscalCode": \r\n`);
    const crlf = await cli('import', file, '--quiet', '--workers', '0');
    expect(crlf.stdout).toMatch(/: 1 created, 0 updated, 0 unchanged, 1 rejected\nline 2: invalid JSON: [^(]*\n$/);
  });

  describe('interrupted', () => {
    // ~13 kB a company: 1,500 are ~20 MB, read in 1 MB blocks. The batch of line 201 is held
    // by the database until the signal has come, so the import is surely running then, and
    // what it read by then (batches in flight, those parsed ahead: under 800 lines) is far
    // from the end.
    const HELD_LINE = 201;
    // `rejectedLine`: a line (before the held one) that is not JSON, so the import has rejected it when the signal comes.
    async function runningImport(seed: number, rejectedLine?: number) {
      const dossiers = [...generateDossiers({ count: 1_500, seed })];
      const file = path.join(dir, `interrupted-${seed}.jsonl`);
      await writeFile(file, dossiers.map((d, i) => (i + 1 === rejectedLine ? 'not json' : JSON.stringify(d)) + '\n').join(''));
      const codes = dossiers.map((d) => d.fiscalCode);
      const hold = await holdCompany(codes[HELD_LINE - 1]!);
      const run = spawnCli('import', file, '--batch-size', '50', '--rejects', `${file}.rejects`);
      try {
        await until('the import waits for the held company', async () => run.child.exitCode === null && (await hold.waitedFor()));
      } catch (err) {
        await hold.release();
        run.child.kill('SIGKILL');
        throw new Error(`${String(err)}; stderr: ${run.output.stderr}`);
      }
      return { ...run, hold, codes };
    }

    it.each([
      ['SIGINT', 0, 130],
      ['SIGTERM', 0, 143],
      // The signal, not the status of an import with rejected lines (2): a script tells "interrupted" from "done".
      ['SIGINT', 1, 130],
    ] as const)('when %s comes mid-import with %i lines rejected then the lines read are written, the rest is not read, and the summary says interrupted with the counts the database holds, the process ending by that signal', async (signal, rejected, status) => {
      const rejectedLine = rejected > 0 ? 10 : undefined;
      const { child, output, exited, hold, codes } = await runningImport(81_200_230 + status + rejected, rejectedLine);
      try {
        child.kill(signal);
        await until('the import says it is stopping', () => output.stderr.includes(`import: stopping (${signal})`), 10_000);
      } finally {
        await hold.release();
      }
      const [code, ended] = await exited;

      // Ended by the signal, as a shell sees it: status 128 + the signal's number.
      expect({ code, ended }, output.stderr).toEqual({ code: null, ended: signal });
      expect(128 + os.constants.signals[signal]).toBe(status);
      const summary = new RegExp(`^imported (\\d+) lines in .*: (\\d+) created, 0 updated, 0 unchanged, ${rejected} rejected \\(interrupted by ${signal}: the rest of the input was not read\\)$`, 'm').exec(output.stdout);
      expect(summary, output.stdout + output.stderr).not.toBeNull();
      const [lines, created] = [Number(summary![1]), Number(summary![2])];
      expect(created).toBe(lines - rejected);
      if (rejectedLine !== undefined) expect(output.stdout).toMatch(new RegExp(`^line ${rejectedLine}: invalid JSON`, 'm'));
      expect(lines).toBeGreaterThanOrEqual(HELD_LINE);
      expect(lines).toBeLessThan(codes.length);
      expect(await storedCount(codes)).toBe(created);
      // The first `lines` lines, exactly: what was read was written in full, in order.
      expect(await storedCount(codes.slice(0, lines))).toBe(created);
    });

    it('when Ctrl-C comes a second time then the CLI quits at once, and the batches being written are rolled back', async () => {
      const { child, output, exited, hold, codes } = await runningImport(81_200_240);
      try {
        child.kill('SIGINT');
        await until('the import says it is stopping', () => output.stderr.includes('import: stopping (SIGINT)'), 10_000);
        // Later than a repeat of the same Ctrl-C (npm run passes it on too) would come.
        await new Promise((resolve) => setTimeout(resolve, 400));
        child.kill('SIGINT');
        // Held still: the CLI does not wait for the batch the database holds back.
        const [code, ended] = await Promise.race([exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running: ${output.stderr}`)), 10_000))]);
        expect({ code, ended }).toEqual({ code: null, ended: 'SIGINT' });
      } finally {
        await hold.release();
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      expect(output.stderr).toContain('import: quitting at once (SIGINT)');
      expect(output.stdout).toBe('');
      // The held batch's other companies: its transaction never committed.
      const heldBatch = codes.slice(HELD_LINE - 1 - ((HELD_LINE - 1) % 50), HELD_LINE - 1 - ((HELD_LINE - 1) % 50) + 50).filter((c) => c !== codes[HELD_LINE - 1]);
      expect(await storedCount(heldBatch)).toBe(0);
      expect(await storedCount(codes.slice(0, 50))).toBe(50);
    });
  });
});
