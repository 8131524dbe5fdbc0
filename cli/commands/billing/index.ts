import { type Command, InvalidArgumentError, Option } from 'commander';
import type { Db } from '../../../core/db/index.js';
import { periodOf } from '../../../core/billing/billing-period.js';
import {
  allowanceReportCsv, buildAllowanceReport, callsCapTerms, changeCredits, CSV_LINE_END, exportLedger, findOrganizationId, FIRST_PERIOD, isPeriod, LAST_PERIOD, ledgerCsvLines, reconcileLedger,
  rebuildUsageTotals, referencedEventId, replayDeadLetters, rollOverDueAllowances, setCallsCap, usePlanCallsCap, type AllowanceSnapshot, type CreditChangeKind, type CsvSeparator, type ReplayOutcome,
} from '../../../core/billing/index.js';
import { AppError } from '../../../core/errors/index.js';
import { recordAudit, withAudit } from '../../../core/dashboard-auth/index.js';
import type { RegisterCommands } from '../index.js';
import type { CliContext } from '../../context.js';
import { createLineWriter } from '../../line-writer.js';
import { count, laterCapText, MAX_WHOLE, positiveInt, printTable, separatorHint, table, wholeNumber } from '../orgs/cli-format.js';
import { renderReport, type ReportFormat } from './render-report.js';

const period = (value: string): string => {
  if (!isPeriod(value)) throw new InvalidArgumentError(`must be a month, YYYY-MM (UTC), from ${FIRST_PERIOD} to ${LAST_PERIOD}.`);
  return value;
};

const signedInt = (value: string): number => {
  if (!/^-?\d+$/.test(value) || BigInt(value) === 0n) throw new InvalidArgumentError(`must be a non-zero whole number (negative removes credits).${separatorHint(value)}`);
  const n = BigInt(value);
  if (n > BigInt(MAX_WHOLE) || n < -BigInt(MAX_WHOLE)) throw new InvalidArgumentError(`must be from -${MAX_WHOLE} to ${MAX_WHOLE}.`);
  return Number(value);
};

// CSV for scripts is comma-separated (RFC 4180); `;` is for a file to open in Excel set to
// Italian (or another language whose list separator it is), as the dashboard's downloads are.
const delimiterOption = () =>
  new Option('--delimiter <char>', 'CSV field separator: "," (default) or ";" (Excel in Italian and other languages with a decimal comma)').choices([',', ';']).default(',');

/** --delimiter says how to write CSV: with another format it would be ignored, so it is refused. */
function csvOnly(command: Command, opts: { format: string }): void {
  if (command.getOptionValueSource('delimiter') === 'cli' && opts.format !== 'csv') command.error(`error: option '--delimiter' applies to --format csv only, not ${opts.format}`, { code: 'cli.delimiterWithoutCsv' });
}

// 'none', not null: commander turns a parser's null into '' (an option that takes a value and
// got none), which the cap check then refused, so `--calls none` could never lift a cap.
// 'plan' drops the organization's own cap for its plan's (usePlanCallsCap).
const cap = (value: string): number | 'none' | 'plan' => {
  if (value === 'none' || value === 'plan') return value;
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`must be a whole number of calls (0 or more), "none" for no cap, or "plan" for the plan's cap.${separatorHint(value)}`);
  return wholeNumber(value);
};

// Every change of the cap is a ledger row (docs/billing.md), so a set-cap that changes nothing
// writes none: this month's cap already `cap`, and, unless --this-period-only, the organization's
// own cap too. Both rows are locked, so a change racing ours is either seen here or waits for us:
// the organization's first, then the allowance's, the order the operator's forms and
// usePlanCallsCap lock them in (the other order deadlocked against a form saved at that moment).
// An allowance still in an older month is left to setCallsCap, whose rollover writes the month's row.
async function capAlreadySet(trx: Db, organizationId: string, cap: number | null, thisPeriodOnly: boolean): Promise<boolean> {
  const own = await trx('organizations').where({ id: organizationId }).forUpdate().first<{ calls_cap_per_period: number | string | null; calls_cap_own: boolean }>('calls_cap_per_period', 'calls_cap_own');
  const allowance = await trx('allowances').where({ organization_id: organizationId }).forUpdate().first<{ period: string; calls_cap: number | string | null } | undefined>('period', 'calls_cap');
  const same = (v: number | string | null) => (v === null ? null : Number(v)) === cap;
  if (!allowance || allowance.period !== periodOf(new Date()) || !same(allowance.calls_cap)) return false;
  if (thisPeriodOnly) return true;
  return own.calls_cap_own && same(own.calls_cap_per_period);
}

/** report, ledger export, reconcile, and `billing …` for grants, top-ups, caps and rollover. */
export const registerBillingCommands: RegisterCommands = (program, context) => {
  const db = async () => (await context().database()).db;
  const org = async (ref: string) => findOrganizationId(await db(), ref);

  program
    .command('report')
    .description("An organization's allowance report for one month: balances, grants, usage by product, key and day, flags.")
    .requiredOption('--org <org>', 'organization id or exact name')
    .requiredOption('--period <YYYY-MM>', 'calendar month, UTC', period)
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'csv', 'json']).default('table'))
    .addOption(delimiterOption())
    .action(async (opts: { org: string; period: string; format: ReportFormat | 'csv'; delimiter: CsvSeparator }, command: Command) => {
      csvOnly(command, opts);
      const report = await buildAllowanceReport(await db(), await org(opts.org), opts.period);
      if (opts.format !== 'csv') {
        for (const line of renderReport(report, opts.format)) context().out(line);
        return;
      }
      // RFC 4180 lines (CR LF), without the BOM the dashboard's download starts with.
      const out = createLineWriter(process.stdout, undefined, CSV_LINE_END);
      for (const line of allowanceReportCsv(report, opts.delimiter)) await out.line(line);
      await out.flush();
    });

  program
    .command('ledger')
    .description('The usage ledger.')
    .command('export')
    .description("Every ledger row of an organization's month, oldest first in the order applied (so each balance after follows from the row before): usage, grants, top-ups, adjustments, rollovers.")
    .requiredOption('--org <org>', 'organization id or exact name')
    .requiredOption('--period <YYYY-MM>', 'calendar month, UTC', period)
    .addOption(new Option('--format <format>', 'output format').choices(['csv', 'json']).default('csv'))
    .addOption(delimiterOption())
    .action(async (opts: { org: string; period: string; format: 'csv' | 'json'; delimiter: CsvSeparator }, command: Command) => {
      csvOnly(command, opts);
      // Row by row as the export reads them: a month can be millions of rows.
      const rows = exportLedger(await db(), await org(opts.org), opts.period);
      const out = createLineWriter(process.stdout, undefined, opts.format === 'csv' ? CSV_LINE_END : '\n');
      let count = 0;
      if (opts.format === 'json') {
        // The bytes of JSON.stringify(allRows, null, 2), without holding all rows.
        let previous: string | undefined;
        for await (const row of rows) {
          await out.line(previous === undefined ? '[' : `${previous},`);
          previous = JSON.stringify(row, null, 2).replace(/^/gm, '  ');
          count++;
        }
        await out.line(previous === undefined ? '[]' : `${previous}\n]`);
      } else {
        // The dashboard's ledger download writes the same lines (after a BOM). A store that
        // fails at once leaves stdout empty.
        for await (const line of ledgerCsvLines(rows, opts.delimiter)) {
          await out.line(line);
          count++;
        }
        count--; // the header
      }
      await out.flush();
      process.stderr.write(`exported ${count} ledger row(s) of ${opts.period}\n`);
    });

  program
    .command('reconcile')
    .description("Check that every organization's balance and calls used equal its ledger sums; exit 1 on any difference.")
    .option('--org <org...>', 'only these organizations (ids or names)')
    .action(async (opts: { org?: string[] }) => {
      const ids = opts.org ? await Promise.all(opts.org.map(org)) : undefined;
      const result = await reconcileLedger(await db(), { organizationIds: ids });
      const out = context().out;
      out(`checked ${count(result.organizations, 'organization')}, ${count(result.ledgerRows, 'ledger row')}`);
      if (result.differences.length === 0) return out('no differences');
      for (const line of table(
        ['ORGANIZATION', 'CREDITS BALANCE', 'LEDGER CREDITS', 'CALLS USED', 'LEDGER CALLS', 'CREDITS USED', 'LEDGER USED', 'DAILY BUCKETS OFF'],
        result.differences.map((d) => [
          d.organizationId, String(d.creditsBalance ?? '(no allowance)'), String(d.ledgerCredits), String(d.callsUsed ?? '(no allowance)'), String(d.ledgerCalls),
          String(d.creditsUsed ?? '(no allowance)'), String(d.ledgerCreditsUsed), String(d.dailyBucketsOff),
        ]),
      )) out(line);
      out(`${result.differences.length} organization(s) differ`);
      const derived = result.differences.filter((d) => d.dailyBucketsOff > 0 || (d.creditsUsed !== null && d.creditsUsed !== d.ledgerCreditsUsed)).map((d) => d.organizationId);
      if (derived.length > 0) out(`daily buckets or credits used off: \`billing rebuild-usage-totals --org ${derived.join(' ')}\` recomputes them from the ledger`);
      process.exitCode = 1;
    });

  const billing = program.command('billing').description('Allowance administration: credits, calls caps, period rollover. Every change is a ledger row with who and why.');
  const printSnapshot = (ctx: CliContext, s: AllowanceSnapshot) =>
    ctx.out(`${s.organizationId} ${s.period}: ${count(s.creditsBalance, 'credit')}, ${count(s.callsUsed, 'call')} used of ${s.callsCap ?? 'no cap'}; credits_exhausted=${s.creditsExhausted} limit_reached=${s.limitReached} (ledger ${s.ledgerEventId})`);

  const creditCommand = (name: string, kind: CreditChangeKind, description: string, parse: (v: string) => number) =>
    billing
      .command(name)
      .description(description)
      .requiredOption('--org <org>', 'organization id or exact name')
      .requiredOption('--credits <n>', 'credits', parse)
      .requiredOption('--reason <text>', 'why (kept on the ledger)')
      .option('--reference <ref>', `your reference for this ${name} (an invoice or ticket number), shown in the ledger's reference column: run again with the same reference, it changes nothing`)
      .action(async (opts: { org: string; credits: number; reason: string; reference?: string }) => {
        const ctx = context();
        const organizationId = await org(opts.org);
        const reference = opts.reference?.trim();
        const eventId = reference === undefined ? undefined : referencedEventId(kind, organizationId, reference);
        const change = { organizationId, kind, credits: opts.credits, actor: ctx.actor, reason: opts.reason, eventId };
        const snapshot = await withAudit(await db(), (trx) => changeCredits(trx, change), (s) => (s.alreadyRecordedAt ? null : { organizationId, actor: ctx.actor, action: `credits.${kind}`, details: { credits: opts.credits, reason: opts.reason, ...(reference === undefined ? {} : { reference }) } }));
        if (snapshot.alreadyRecordedAt) ctx.out(`already on the ledger since ${snapshot.alreadyRecordedAt.toISOString()} under reference ${reference}: nothing changed, no ledger row written`);
        printSnapshot(ctx, snapshot);
      });
  creditCommand('grant', 'grant', 'Grant included credits (e.g. a contract bonus).', positiveInt);
  creditCommand('top-up', 'top_up', 'Add bought credits; clears credits_exhausted once a call is covered again.', positiveInt);
  creditCommand('adjust', 'adjustment', 'Correct the balance either way (negative removes credits).', signedInt);

  billing
    .command('set-cap')
    .description('Set the calls cap: this period and (unless --this-period-only) the organization\'s own cap, which later periods get; "plan" drops the organization\'s own cap for its plan\'s.')
    .requiredOption('--org <org>', 'organization id or exact name')
    .requiredOption('--calls <n|none|plan>', 'calls per month, "none", or "plan" (back to the plan\'s cap, this period and later ones)', cap)
    .requiredOption('--reason <text>', 'why (kept on the ledger)')
    .option('--this-period-only', 'leave the organization\'s cap for later months unchanged')
    .action(async (opts: { org: string; calls: number | 'none' | 'plan'; reason: string; thisPeriodOnly?: boolean }, command: Command) => {
      const ctx = context();
      // Back to the plan is for the months to come too: for this month alone, give the number.
      if (opts.calls === 'plan' && opts.thisPeriodOnly) command.error("error: --calls plan puts this period and later ones on the plan's cap: it takes no --this-period-only (give the plan's number for this period alone)", { code: 'cli.planCapThisPeriod' });
      const organizationId = await org(opts.org);
      if (opts.calls === 'plan') {
        const back = await withAudit(
          await db(),
          (trx) => usePlanCallsCap(trx, { organizationId, actor: ctx.actor, reason: opts.reason }),
          (s) => s && { organizationId, actor: ctx.actor, action: 'allowance.cap_plan', details: { planId: s.planId, callsCap: s.callsCap, reason: opts.reason } },
        );
        if (back) printSnapshot(ctx, back);
        const terms = await callsCapTerms(await db(), organizationId);
        ctx.out(back ? `${organizationId}: later months: ${laterCapText(terms)}` : `${organizationId}: already on the cap of plan ${terms.planId}, this month and later (${laterCapText(terms)}): nothing changed, no ledger row written`);
        return;
      }
      const callsCap = opts.calls === 'none' ? null : opts.calls;
      const thisPeriodOnly = opts.thisPeriodOnly === true;
      const set = await withAudit(
        await db(),
        async (trx) => ((await capAlreadySet(trx, organizationId, callsCap, thisPeriodOnly))
          ? undefined
          : setCallsCap(trx, { organizationId, callsCap, thisPeriodOnly, actor: ctx.actor, reason: opts.reason })),
        (snapshot) => (snapshot ? { organizationId, actor: ctx.actor, action: 'allowance.cap_set', details: { callsCap, thisPeriodOnly, reason: opts.reason } } : null),
      );
      if (set) printSnapshot(ctx, set);
      else ctx.out(`${organizationId}: the calls cap is already ${callsCap ?? 'none'}${thisPeriodOnly ? ' this month' : ''}: nothing changed, no ledger row written`);
      // A cap for this month only: what the months after it get, which this command left as it was.
      if (thisPeriodOnly) ctx.out(`${organizationId}: later months: ${laterCapText(await callsCapTerms(await db(), organizationId))}`);
    });

  billing
    .command('rollover')
    .description('Open the current calendar month for every allowance still in an older one (the billing worker also does this on a timer).')
    .action(async () => {
      context().out(`${await rollOverDueAllowances(await db())} allowance(s) rolled over`);
    });

  billing
    .command('rebuild-usage-totals')
    .description("Recompute from the ledger the daily usage buckets and credits used this month that the worker keeps beside it, when `reconcile` shows them off. Balances and calls used are never touched.")
    .requiredOption('--org <org...>', 'organization ids or exact names')
    .action(async (opts: { org: string[] }) => {
      const ctx = context();
      for (const organizationId of await Promise.all(opts.org.map(org))) {
        const r = await withAudit(await db(), (trx) => rebuildUsageTotals(trx, organizationId), (rebuilt) => ({
          organizationId, actor: ctx.actor, action: 'usage.totals_rebuilt', details: { bucketsOff: rebuilt.bucketsOff, creditsUsedBefore: rebuilt.creditsUsedBefore, creditsUsedAfter: rebuilt.creditsUsedAfter },
        }));
        const changed = r.bucketsOff > 0 || r.creditsUsedBefore !== r.creditsUsedAfter;
        ctx.out(`${organizationId}: ${changed ? `rebuilt from the ledger: ${r.bucketsOff} daily bucket(s) were off, credits used ${r.creditsUsedBefore} → ${r.creditsUsedAfter}` : 'already equal to the ledger'}`);
      }
    });

  billing
    .command('dead-letters')
    .description('Usage messages that could not be billed, newest first, with their reasons: the open ones, or with --all also those replayed.')
    .option('--limit <n>', 'how many', positiveInt, 20)
    .option('--all', 'also the dead letters already replayed')
    .action(async (opts: { limit: number; all?: boolean }) => {
      const query = (await db())('usage_dead_letters').orderBy('id', 'desc').limit(opts.limit);
      if (!opts.all) query.whereNull('resolved_at');
      const rows = await query.select<{ id: number; created_at: Date; bus: string; reason: string; payload: string; resolution: string | null; resolved_by: string | null }[]>('id', 'created_at', 'bus', 'reason', 'payload', 'resolution', 'resolved_by');
      const lines = rows.map((r) => [String(r.id), r.created_at.toISOString(), r.bus, r.resolution ? `${r.resolution} (${r.resolved_by})` : 'open', r.reason, r.payload.slice(0, 80)]);
      const none = opts.all ? 'no dead letters: no usage message has been set aside as unbillable' : 'no open dead letters: no usage message is waiting to be billed (--all also lists those replayed)';
      printTable(context().out, ['ID', 'AT', 'BUS', 'STATUS', 'REASON', 'PAYLOAD'], lines, none);
    });

  billing
    .command('replay-dead-letters')
    .description('Bill dead letters again once their cause is fixed: each is applied as the worker applies usage (an event already in the ledger is not charged twice); one still unbillable stays open and the command exits 1.')
    .option('--id <id...>', 'these dead letters (ids from `billing dead-letters`)')
    .option('--all', 'every open dead letter, oldest first')
    .action(async (opts: { id?: string[]; all?: boolean }) => {
      const ctx = context();
      if ((opts.id === undefined) === (opts.all !== true)) throw new AppError('invalid_params', 'Give either --id <id...> or --all.');
      const ids = opts.id?.map((v) => {
        if (!/^\d+$/.test(v)) throw new AppError('invalid_params', `--id ${v}: a dead letter's id is a whole number (see \`billing dead-letters\`).`);
        return Number(v);
      });
      const counts: Record<ReplayOutcome, number> = { charged: 0, already_charged: 0, still_failing: 0, not_open: 0 };
      await replayDeadLetters(await db(), {
        ids,
        actor: ctx.actor,
        audit: recordAudit,
        onResult: (r) => {
          counts[r.outcome] += 1;
          const line = `#${r.id} ${r.outcome.replace('_', ' ')}${r.eventId ? ` ${r.eventId}` : ''}${r.reason ? `: ${r.reason}` : ''}`;
          // What failed is a message (stderr); what was billed, and the tally, are results (stdout).
          if (r.outcome === 'still_failing' || r.outcome === 'not_open') process.stderr.write(`${line}\n`);
          else ctx.out(line);
        },
      });
      ctx.out(`${counts.charged} charged, ${counts.already_charged} already charged, ${counts.still_failing} still failing, ${counts.not_open} not open`);
      if (counts.still_failing > 0 || counts.not_open > 0) process.exitCode = 1;
    });
};
