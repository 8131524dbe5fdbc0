import { AppError } from '../../../core/errors/index.js';
import { endAllSessions, hashPassword, issuePasswordReset } from '../../../core/dashboard-auth/index.js';
import { randomBase62 } from '../../../core/ids/index.js';
import type { Config } from '../../../core/config/index.js';
import type { RegisterCommands } from '../index.js';
import { readDemoFile } from '../start/demo-credentials.js';

// The first operator's password is shown once, by the `npm start` that made it: an operator who
// lost it (or a start that failed before writing it down) gets a new one here. Anyone else with
// an account (an organization's only admin, say) gets a reset link, which they open to choose a
// new password themselves: the dashboard sends no e-mail, so the link is printed to hand over.
export const registerOperatorCommands: RegisterCommands = (program, context) => {
  const operator = program.command('operator').description('Dashboard accounts: reset a lost password.');
  operator
    .command('reset-password')
    .description("Give an operator a new random password, printed once on stdout; the operator's dashboard sessions end.")
    .requiredOption('--email <email>', "the operator's e-mail, e.g. operator@example.com")
    .action(async (opts: { email: string }) => {
      const db = (await context().database()).db;
      const password = randomBase62(20);
      const passwordHash = await hashPassword(password);
      const email = opts.email.trim().toLowerCase();
      const user = await db.transaction(async (trx) => {
        const found = await trx('users').whereRaw('lower(email) = ?', [email]).whereNull('disabled_at')
          .forUpdate().first<{ id: string; email: string; is_operator: boolean } | undefined>('id', 'email', 'is_operator');
        if (!found?.is_operator) {
          // A member's password is theirs to choose: they get a link, not a password we print.
          const hint = found ? ` For a member, \`operator reset-link --email ${opts.email}\` prints a password reset link to send them.` : '';
          throw new AppError('not_found', `No operator with e-mail "${opts.email}".${hint}`);
        }
        await trx('users').where({ id: found.id }).update({ password_hash: passwordHash });
        await endAllSessions(trx, found.id);
        return found;
      });
      process.stderr.write(`New password for operator ${user.email} (its dashboard sessions ended):\n`);
      context().out(password);
      process.stderr.write('Store it now: it is shown only once.\n');
    });
  operator
    .command('reset-link')
    .description('Make a password reset link for anyone with a dashboard account, printed once on stdout to send them; it works once, for 24 hours, and replaces the one made before. Their password is unchanged until they use it.')
    .requiredOption('--email <email>', "the person's e-mail, e.g. ada@example.com")
    .action(async (opts: { email: string }) => {
      // Before the link is made: a new one replaces the last, so one never printed would only
      // have spent the link its owner may already hold.
      const base = await dashboardAddress(context().config);
      const db = (await context().database()).db;
      const reset = await db.transaction((trx) => issuePasswordReset(trx, { organizationId: null, email: opts.email, issuedBy: context().actor, issuedAs: 'operator' }));
      process.stderr.write(`Password reset link for ${reset.email}, until ${reset.expiresAt.toISOString()} (their password is unchanged until they use it):\n`);
      context().out(`${base}/password-reset/${reset.token}`);
      process.stderr.write('Send it to them yourself: it is shown only once, and works once.\n');
    });
};

/**
 * Where the dashboard is reached, for a link printed to send someone: PUBLIC_DASHBOARD_URL; else
 * the address the `npm start` of this DATA_DIR wrote in demo.json (its actual port, which
 * DASHBOARD_PORT in this shell may not be); else http://HOST:DASHBOARD_PORT. An address that
 * listens everywhere (HOST 0.0.0.0 or ::, as in a container: `docker compose exec api …`) opens
 * nothing in a browser, so it is refused rather than printed.
 */
async function dashboardAddress(config: Config): Promise<string> {
  const base = (config.PUBLIC_DASHBOARD_URL ?? (await readDemoFile(config.DATA_DIR))?.dashboardUrl ?? `http://${config.HOST}:${config.DASHBOARD_PORT}`).replace(/\/+$/, '');
  let host: string;
  try {
    host = new URL(base).hostname;
  } catch {
    host = config.HOST; // http://:::3002, from HOST ::
  }
  if (['0.0.0.0', '::', '[::]'].includes(host)) {
    throw new Error(`the dashboard's address here would be ${base}, where ${host} means every interface, not an address to open: set PUBLIC_DASHBOARD_URL to the address people open the dashboard at (e.g. PUBLIC_DASHBOARD_URL=https://dashboard.example.com); no link was made`);
  }
  return base;
}
