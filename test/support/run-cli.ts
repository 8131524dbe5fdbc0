import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The real CLI in a child process, as an operator runs it in development (`node --import tsx
 * cli/main.ts`), against `databaseUrl`. Never rejects: the exit code is part of the result.
 */
export function runCli(databaseUrl: string, ...args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'cli/main.ts', ...args],
      { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' }, cwd: repoRoot },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
