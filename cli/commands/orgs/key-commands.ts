import { Option, type Command } from 'commander';
import { apiKeyIn, apiKeyState, apiKeyStatus, createApiKey, hashApiKey, listApiKeys, revokeApiKey } from '../../../core/auth/index.js';
import type { Db } from '../../../core/db/index.js';
import { AppError } from '../../../core/errors/index.js';
import { findOrganizationId } from '../../../core/billing/index.js';
import { withAudit } from '../../../core/dashboard-auth/index.js';
import type { CliContext } from '../../context.js';
import { date, expiryDate, printTable } from './cli-format.js';

export function registerKeyCommands(program: Command, context: () => CliContext): void {
  const key = program.command('key').description('API keys: create (shown once), list, revoke.');
  const db = async () => (await context().database()).db;

  key
    .command('create')
    .description('Create an API key. Prints the full key once, on stdout; it cannot be shown again.')
    .requiredOption('--org <org>', 'organization id or exact name')
    .requiredOption('--name <name>', 'what the key is for, e.g. "billing system"')
    .option('--expires <when>', 'expiry: a date (YYYY-MM-DD, valid through that day, UTC) or an ISO 8601 date-time with Z or an offset, e.g. 2027-01-31T12:00:00+01:00 (default: never)', expiryDate)
    .option('--test', 'a test-mode key (sk_test_)')
    .option('--personal', 'a personal key (refused by the API and the key connection of the tool server)')
    .action(async (opts: { org: string; name: string; expires?: Date; test?: boolean; personal?: boolean }) => {
      const d = await db();
      const actor = context().actor;
      const organizationId = await findOrganizationId(d, opts.org);
      const { key: secret, record } = await withAudit(
        d,
        (trx) => createApiKey(trx, {
          organizationId,
          name: opts.name,
          mode: opts.test ? 'test' : 'live',
          kind: opts.personal ? 'personal' : 'organization',
          expiresAt: opts.expires ?? null,
          createdBy: actor,
        }),
        (created) => ({ organizationId, actor, action: 'key.created', details: { keyId: created.record.id, name: created.record.name, mode: created.record.mode } }),
      );
      // The key alone on stdout (so it can be captured); everything else on stderr.
      process.stderr.write(`Created ${record.kind} key ${record.id} (${record.mode}) for ${record.organizationId}${record.expiresAt ? `, expires ${date(record.expiresAt)}` : ''}.\n`);
      context().out(secret);
      process.stderr.write('Store this key now: it is shown only once and cannot be recovered.\n');
      // Made all the same: an operator may create keys before provisioning is done, as the
      // dashboard lets an admin. But a key that every call refuses must not look ready.
      const { plan_id: planId } = await d('organizations').where({ id: organizationId }).first<{ plan_id: string | null }>('plan_id');
      if (planId === null) process.stderr.write(`warning: ${organizationId} has no plan: every call with this key is refused with client_not_configured until it has one (\`cli org set-plan ${organizationId} standard\`).\n`);
    });

  key
    .command('list')
    .description("List an organization's keys (prefix only; never the key).")
    .requiredOption('--org <org>', 'organization id or exact name')
    // An organization that rotates keys collects revoked ones: the live ones, or the others, alone.
    .addOption(new Option('--state <state>', 'only the keys in this state (active includes the expiring ones)').choices(['active', 'revoked', 'expired']))
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (opts: { org: string; state?: 'active' | 'revoked' | 'expired'; format: 'table' | 'json' }) => {
      const d = await db();
      const organizationId = await findOrganizationId(d, opts.org);
      const now = new Date();
      // Filtered by state as the dashboard's tabs are (its Active tab lists the expiring keys
      // too), and each said as the dashboard says it: a key that stops working within 30 days
      // (a rotated one in its grace period) is `expiring`, not `active`.
      const keys = (await listApiKeys(d, organizationId))
        .filter((k) => !opts.state || apiKeyState(k, now) === opts.state)
        .map((k) => ({ ...k, state: apiKeyStatus(k, now) }));
      if (opts.format === 'json') {
        // One JSON array, for scripts: the same fields as the table, dates in ISO 8601, never the key.
        context().out(JSON.stringify(keys.map((k) => ({
          id: k.id, prefix: k.prefix, name: k.name, kind: k.kind, mode: k.mode, state: k.state,
          createdAt: k.createdAt.toISOString(), expiresAt: k.expiresAt?.toISOString() ?? null, lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
        }))));
        return;
      }
      const rows = keys.map((k) => [k.id, `${k.prefix}…`, k.name, k.kind, k.mode, k.state, date(k.createdAt), date(k.expiresAt), date(k.lastUsedAt)]);
      const none = opts.state ? `${organizationId} has no ${opts.state} keys` : `${organizationId} has no keys: create one with \`cli key create --org ${organizationId} --name NAME\``;
      printTable(context().out, ['ID', 'PREFIX', 'NAME', 'KIND', 'MODE', 'STATE', 'CREATED', 'EXPIRES', 'LAST USED'], rows, none);
    });

  key
    .command('revoke')
    .description('Revoke a key: refused everywhere within a second.')
    .argument('<key>', 'key id (key_…), as shown by key list; or the key itself (sk_…), e.g. one that leaked')
    .action(async (given: string) => {
      const actor = context().actor;
      // A key is looked up by its hash, and never echoed: also one pasted with what surrounded
      // it (`Bearer sk_…`, spaces, quotes), and anything else holding `sk_`, a mistyped key
      // being most of a real one. An id is taken as given, give or take the spaces around it.
      const secret = apiKeyIn(given) ?? (given.includes('sk_') ? given.trim() : undefined);
      const keyId = secret !== undefined ? await keyIdOfSecret(await db(), secret) : given.trim();
      // Revoking a revoked key changes nothing: no audit row, and the answer says so.
      const { key: record, revoked } = await withAudit(await db(), (trx) => revokeApiKey(trx, keyId, actor), (r) => (r.revoked ? { organizationId: r.key.organizationId, actor, action: 'key.revoked', details: { keyId: r.key.id } } : null));
      context().out(`${record.id} ${revoked ? 'revoked' : 'was already revoked'} at ${date(record.revokedAt)}`);
      if (secret !== undefined) process.stderr.write(`(found by the key itself: ${record.prefix}…, of ${record.organizationId})\n`);
    });
}

/**
 * The id of the key whose secret this is, found by its hash: someone holding a leaked key can
 * revoke it without first finding which one it is. The secret is never echoed, not even when no
 * key matches it (a mistyped one is most of a real key), since terminals and logs keep errors.
 */
async function keyIdOfSecret(db: Db, secret: string): Promise<string> {
  const row = await db('api_keys').where({ hash: hashApiKey(secret) }).first<{ id: string } | undefined>('id');
  if (!row) throw new AppError('not_found', 'No API key is this key (not shown here): give the key as it was created, or its id (key_…) from `cli key list --org ORG`.');
  return row.id;
}
