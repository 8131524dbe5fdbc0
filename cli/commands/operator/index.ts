import { AppError } from '../../../core/errors/index.js';
import { endAllSessions, hashPassword } from '../../../core/dashboard-auth/index.js';
import { randomBase62 } from '../../../core/ids/index.js';
import type { RegisterCommands } from '../index.js';

// The first operator's password is shown once, by the `npm start` that made it: an operator who
// lost it (or a start that failed before writing it down) gets a new one here.
export const registerOperatorCommands: RegisterCommands = (program, context) => {
  const operator = program.command('operator').description('Dashboard operators: reset a lost password.');
  operator
    .command('reset-password')
    .description("Give an operator a new random password, printed once on stdout; the operator's dashboard sessions end.")
    .requiredOption('--email <email>', "the operator's e-mail, e.g. operator@example.com")
    .action(async (opts: { email: string }) => {
      const db = (await context().database()).db;
      const password = randomBase62(20);
      const passwordHash = await hashPassword(password);
      const user = await db.transaction(async (trx) => {
        const found = await trx('users').whereRaw('lower(email) = ?', [opts.email.trim().toLowerCase()]).where({ is_operator: true }).whereNull('disabled_at')
          .forUpdate().first<{ id: string; email: string } | undefined>('id', 'email');
        if (!found) throw new AppError('not_found', `No operator with e-mail "${opts.email}".`);
        await trx('users').where({ id: found.id }).update({ password_hash: passwordHash });
        await endAllSessions(trx, found.id);
        return found;
      });
      process.stderr.write(`New password for operator ${user.email} (its dashboard sessions ended):\n`);
      context().out(password);
      process.stderr.write('Store it now: it is shown only once.\n');
    });
};
