import { execFile } from 'node:child_process';
import path from 'node:path';
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
  return runCliWithEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' }, ...args);
}

/** As runCli, with `env` laid over the test's environment (undefined removes a variable). */
export function runCliWithEnv(env: Record<string, string | undefined>, ...args: string[]): Promise<CliRun> {
  return runCliIn(repoRoot, env, ...args);
}

/** As runCliWithEnv, run from `cwd` (an operator's shell in another folder); tsx is found from here. */
export function runCliIn(cwd: string, env: Record<string, string | undefined>, ...args: string[]): Promise<CliRun> {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete merged[name];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', import.meta.resolve('tsx'), path.join(repoRoot, 'cli/main.ts'), ...args],
      { env: merged, cwd },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
