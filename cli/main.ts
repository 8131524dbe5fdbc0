import { Command, CommanderError } from 'commander';
import { ConfigError } from '../core/config/index.js';
import { isAppError } from '../core/errors/index.js';
import { registrations } from './commands/index.js';
import { createCliContext, type CliContext } from './context.js';

// Operator CLI: `npm run cli -- <command> --help` at every level.
const program = new Command()
  .name('cli')
  .description('Operator commands for the Italian company data service.')
  .showHelpAfterError()
  .exitOverride();

let context: CliContext | undefined;
const getContext = () => (context ??= createCliContext(process.env));
for (const register of registrations) register(program, getContext);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportFailure(err);
} finally {
  await context?.close();
}

function reportFailure(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode;
  if (err instanceof ConfigError) process.stderr.write(err.message + '\n');
  else if (isAppError(err)) process.stderr.write(`error (${err.code}): ${err.message}\n`);
  else process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}
