import { Command, CommanderError } from 'commander';
import { ConfigError } from '../core/config/index.js';
import { isAppError } from '../core/errors/index.js';
import { registrations } from './commands/index.js';
import { createCliContext, type CliContext } from './context.js';
import { keysNeverEchoed, writeError } from './keys-never-echoed.js';
import { refuseRepeatedOptions } from './refuse-repeated-options.js';
import { unknownOptionsFirst } from './unknown-options-first.js';
import { hintHelpOnUsageErrors } from './usage-error-hint.js';

// Operator CLI: `npm run -s cli -- <command> --help` at every level.
const program = new Command()
  .name('cli')
  .description('Operator commands for the Italian company data service.')
  .exitOverride();

// A reader that stops early (`cli org show X | head -1`) closes the pipe, and the next write
// fails with EPIPE: Node reports it as an unhandled 'error' event (a stack trace), or, for an
// export waiting on the stream (line-writer), as a failed command. Nobody is left to read the
// rest, so the CLI stops at once and quietly, as `yes | head` does: status 0, unless the
// command has already set its status (an import: 1 until it has finished, then 2 if it
// rejected lines). At once, so an export does not wait for a 'drain' that will never come; a
// transaction still open then is rolled back by Postgres when the connection drops. Any other
// write error still throws.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit();
    throw err;
  });
}

let context: CliContext | undefined;
const getContext = () => (context ??= createCliContext(process.env));
for (const register of registrations) register(program, getContext);
hintHelpOnUsageErrors(program);
keysNeverEchoed(program);
refuseRepeatedOptions(program);
unknownOptionsFirst(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportFailure(err);
}
try {
  await context?.close();
} catch (err) {
  // Reported as a command's failure is: one line, not Node's uncaught-error dump.
  process.exitCode = reportFailure(err);
}

function reportFailure(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode;
  if (err instanceof ConfigError) writeError(err.message + '\n');
  else if (isAppError(err)) writeError(`error (${err.code}): ${err.message}\n`);
  else writeError(`error: ${context?.databaseFailure(err) ?? (err instanceof Error ? err.message : String(err))}\n`);
  return 1;
}
