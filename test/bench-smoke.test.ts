import { execFile } from 'node:child_process';
import { inject, it, expect } from 'vitest';

// `npm run bench` is how issue 3's speed targets are checked, so a bench that no longer runs
// goes unnoticed until someone needs its figures (a cap on credits per period once stopped it
// before its first pass). Its smoke mode runs every pass for a second and fails on any request
// not answered with a 2xx. No figure is judged here: timing belongs to the bench itself.

it('npm run bench runs every pass end to end, every request answered with a 2xx', async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'bench/api.ts', '--smoke'],
      // The bench makes a database of its own on this server, and drops it when done.
      { env: { ...process.env, DATABASE_URL: inject('databaseUrl') }, timeout: 150_000, maxBuffer: 10_000_000 },
      (err, out, errOut) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: out, stderr: errOut }),
    );
  });
  expect({ code, stderr: stderr.slice(-2_000) }).toEqual({ code: 0, stderr: expect.any(String) });
  for (const pass of ['bare Koa hello', 'GET /companies/{code}/financials', 'GET /companies/{code}/report', 'financials, steady', 'GET /companies/{code}/profile', 'MCP tools/call service_get_company_profile']) {
    expect(stdout).toContain(pass);
  }
  expect(stdout).toContain('summary of a smoke run');
  expect(stdout).not.toMatch(/non-2xx|requests failed|answered with an error/);
}, 180_000);

// bench:people measures the people search at a million companies; at 2,000 it measures nothing,
// but shows that the synthetic people load and every search of the bench runs and answers.
it('npm run bench:people loads its synthetic people and runs every search, each with an answer', async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'bench/people-search.ts', '--count', '2000', '--reps', '1'],
      { env: { ...process.env, DATABASE_URL: inject('databaseUrl') }, timeout: 150_000, maxBuffer: 10_000_000 },
      (err, out, errOut) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: out, stderr: errOut }),
    );
  });
  expect({ code, stderr: stderr.slice(-2_000) }).toEqual({ code: 0, stderr: expect.any(String) });
  expect(stdout).toMatch(/people search over [\d,]+ officers and shareholders of 2,000 companies/);
  // The commonest surname is found, by a name holding it (score 1), with its roles.
  expect(stdout).toMatch(/"Rossi" \(the commonest surname\).* Rossi[^\n]*\(1, \d+ roles\)/i);
  // One line per search of the bench (its CASES), none left out by a failure.
  expect(stdout.match(/^ {2}"/gm)).toHaveLength(13);
}, 180_000);
