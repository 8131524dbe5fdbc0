import type { Command } from 'commander';
import { AppError } from '../../../core/errors/index.js';
import {
  callsCapTerms, clearProductOverride, createOrganization, ensureDefaultPlans, findOrganizationId, getOrganization, listOrganizations, listPlans, nameTakenBy,
  setOrganizationLimits, setOrganizationPlan, setProductOverride,
} from '../../../core/billing/index.js';
import { withAudit } from '../../../core/dashboard-auth/index.js';
import type { Db } from '../../../core/db/index.js';
import type { CliContext } from '../../context.js';
import { count, date, laterCapText, MAX_RATE_LIMIT, printTable, table, unit, wholeNumber, wholeNumberUpTo } from './cli-format.js';

export function registerOrgCommands(program: Command, context: () => CliContext): void {
  const org = program.command('org').description('Organizations: provisioning, plans, limits and per-product overrides.');
  const db = async () => (await context().database()).db;

  org
    .command('create')
    .description('Create an organization (with its allowance for this month) and print its id.')
    .requiredOption('--name <name>', 'display name')
    .option('--plan <plan>', 'plan id; "none" leaves it unprovisioned', 'standard')
    .option('--allow-duplicate-name', 'create it even when another organization has this name (compared ignoring case and extra spaces)')
    .action(async (opts: { name: string; plan: string; allowDuplicateName?: boolean }) => {
      const d = await db();
      await ensureDefaultPlans(d);
      if (opts.plan !== 'none') await requireKnownPlan(d, opts.plan);
      const actor = context().actor;
      const allowDuplicateName = opts.allowDuplicateName === true;
      const created = await withAudit(
        d,
        (trx) => createOrganization(trx, { name: opts.name, planId: opts.plan === 'none' ? null : opts.plan, actor, allowDuplicateName }),
        (o) => ({ organizationId: o.id, actor, action: 'organization.created', details: { name: o.name, planId: o.planId } }),
      ).catch((err: unknown) => {
        // A script run again (after a timeout) must not make a second one: it stops here, told
        // which one there is and how to make another all the same.
        const existing = nameTakenBy(err);
        if (existing === undefined) throw err;
        throw new AppError('invalid_params', `${(err as AppError).message} Use that one (cli org show ${existing}), or pass --allow-duplicate-name to create another.`);
      });
      context().out(created.id);
    });

  org
    .command('list')
    .description('List organizations.')
    .action(async () => {
      const rows = await listOrganizations(await db());
      const lines = rows.map((o) => [o.id, o.name, o.planId ?? '-', o.status, date(o.createdAt)]);
      printTable(context().out, ['ID', 'NAME', 'PLAN', 'STATUS', 'CREATED'], lines, 'no organizations yet: create one with `cli org create --name NAME`');
    });

  org
    .command('show')
    .description('Show an organization: plan, effective limits and products, overrides, allowance.')
    .argument('<org>', 'organization id or exact name')
    .action(async (ref: string) => {
      const d = await db();
      const o = await getOrganization(d, await findOrganizationId(d, ref));
      const out = context().out;
      out(`id:       ${o.id}`);
      out(`name:     ${o.name}`);
      out(`plan:     ${o.planId ?? '- (not configured: every call is refused with client_not_configured)'}`);
      out(`status:   ${o.status}`);
      const l = o.effectiveLimits;
      const mark = (v: number | null) => (v === null ? '' : ' (override)');
      out(l ? `limits:   ${l.perSecond}/s${mark(o.limitOverrides.perSecond)}, burst ${l.burst}${mark(o.limitOverrides.burst)}, ${l.perMinute}/min${mark(o.limitOverrides.perMinute)}` : 'limits:   -');
      // The cap later months get (the organization's own, else its plan's), and this period's
      // beside it when a cap set for this period only makes them differ: the period line alone
      // showed this month's as if it were the organization's.
      const cap = await callsCapTerms(d, o.id);
      const thisPeriod = cap.period !== null && cap.thisPeriod !== cap.laterPeriods ? `; this period: ${cap.thisPeriod ?? 'no cap'}, set for this period only` : '';
      out(`cap:      ${laterCapText(cap)}${thisPeriod}`);
      if (o.allowance) {
        const a = o.allowance;
        out(`period:   ${a.period}: ${count(a.creditsBalance, 'credit')} left, ${count(a.callsUsed, 'call')} used of ${a.callsCap ?? 'no cap'}`);
        out(`flags:    credits_exhausted=${a.creditsExhausted} limit_reached=${a.limitReached}`);
      }
      const overridden = new Set(o.productOverrides.map((p) => p.product));
      out('products:');
      for (const line of table(
        ['  PRODUCT', 'KIND', 'QUANTITY', 'UNIT', ''],
        [...o.products].map(([slug, p]) => [`  ${slug}`, p.kind, String(p.measure.quantity), p.measure.unit, overridden.has(slug) ? 'override' : '']),
      )) out(line);
      const disabled = o.productOverrides.filter((p) => !p.enabled).map((p) => p.product);
      if (disabled.length > 0) out(`disabled: ${disabled.join(', ')}`);
    });

  org
    .command('set-plan')
    .description('Move an organization to a plan ("none" unprovisions it).')
    .argument('<org>', 'organization id or exact name')
    .argument('<plan>', 'plan id, or "none"')
    .action(async (ref: string, plan: string) => {
      const d = await db();
      await ensureDefaultPlans(d);
      const actor = context().actor;
      const orgId = await findOrganizationId(d, ref);
      const planId = plan === 'none' ? null : plan;
      if (planId !== null) await requireKnownPlan(d, planId);
      const updated = await withAudit(d, (trx) => setOrganizationPlan(trx, orgId, planId, actor), () => ({ organizationId: orgId, actor, action: 'organization.plan_set', details: { planId } }));
      context().out(`${updated.id}: plan ${updated.planId ?? 'none'}`);
    });

  org
    .command('set-limits')
    .description("Override the plan's rate limits for this organization (0 returns a limit to the plan's value).")
    .argument('<org>', 'organization id or exact name')
    .option('--per-second <n>', 'sustained calls per second', wholeNumberUpTo(MAX_RATE_LIMIT))
    .option('--burst <n>', 'calls allowed at once (at least the per-second limit)', wholeNumberUpTo(MAX_RATE_LIMIT))
    .option('--per-minute <n>', 'calls per clock minute (at least the per-second limit)', wholeNumberUpTo(MAX_RATE_LIMIT))
    .action(async (ref: string, opts: { perSecond?: number; burst?: number; perMinute?: number }) => {
      if (opts.perSecond === undefined && opts.burst === undefined && opts.perMinute === undefined) {
        throw new AppError('invalid_params', 'Give at least one of --per-second, --burst, --per-minute.');
      }
      const d = await db();
      const orgId = await findOrganizationId(d, ref);
      const toOverride = (v: number | undefined) => (v === undefined ? undefined : v === 0 ? null : v);
      const limits = { perSecond: toOverride(opts.perSecond), burst: toOverride(opts.burst), perMinute: toOverride(opts.perMinute) };
      const o = await withAudit(d, (trx) => setOrganizationLimits(trx, orgId, limits), (set) => ({ organizationId: orgId, actor: context().actor, action: 'organization.limits_set', details: { ...set } }));
      const show = (v: number | null) => (v === null ? 'plan' : String(v));
      context().out(`${orgId}: per-second ${show(o.perSecond)}, burst ${show(o.burst)}, per-minute ${show(o.perMinute)}`);
    });

  org
    .command('override')
    .description("Change one product for this organization: its measure, remove it, or go back to the plan's.")
    .argument('<org>', 'organization id or exact name')
    .argument('<product>', 'endpoint slug or tool name, e.g. company-financials')
    .option('--quantity <q>', 'measure billed per call', wholeNumber)
    .option('--unit <unit>', 'credits or calls', unit)
    .option('--disable', 'remove the product for this organization')
    .option('--clear', "drop the override: back to the plan's terms")
    .addHelpText('after', '\nWith no option, enables the product at the plan (or catalogue) measure.')
    .action(async (ref: string, product: string, opts: { quantity?: number; unit?: 'credits' | 'calls'; disable?: boolean; clear?: boolean }) => {
      const measure = opts.quantity !== undefined || opts.unit !== undefined;
      if ([measure, opts.disable, opts.clear].filter(Boolean).length > 1) {
        throw new AppError('invalid_params', 'Use only one of --quantity/--unit, --disable, --clear.');
      }
      const d = await db();
      const orgId = await findOrganizationId(d, ref);
      const audit = { organizationId: orgId, actor: context().actor };
      if (opts.clear) {
        const removed = await withAudit(d, (trx) => clearProductOverride(trx, orgId, product), (done) => (done ? { ...audit, action: 'organization.product_reset', details: { product } } : null));
        context().out(removed ? `${orgId}: ${product} back to the plan's terms` : `${orgId}: ${product} had no override`);
        return;
      }
      // --quantity or --unit alone changes that part of the measure and keeps the other as the
      // override already had it: `--quantity 0` after `--unit credits` means 0 credits, not the
      // plan's unit again. No option at all is the plan's measure, as the help says.
      const before = measure ? (await getOrganization(d, orgId)).productOverrides.find((p) => p.product === product && p.enabled) : undefined;
      const override = opts.disable
        ? { enabled: false }
        : { enabled: true, quantity: opts.quantity ?? before?.quantity ?? null, unit: opts.unit ?? before?.unit ?? null };
      const o = await withAudit(d, (trx) => setProductOverride(trx, orgId, product, override), (set) => ({ ...audit, action: 'organization.product_set', details: { product, enabled: set.enabled, quantity: set.quantity, unit: set.unit } }));
      if (!o.enabled) return context().out(`${orgId}: ${product} disabled`);
      const now = (await getOrganization(d, orgId)).products.get(product);
      const from = o.quantity === null && o.unit === null ? "the plan's measure" : o.quantity === null ? "the plan's quantity" : o.unit === null ? "the plan's unit" : 'override';
      context().out(`${orgId}: ${product} enabled at ${now ? count(now.measure.quantity, now.measure.unit.replace(/s$/, '')) : '?'} (${from})`);
    });
}

/**
 * A plan id given on the command line names a plan of the database, else the error lists those
 * there are: "No plan with id premium." left an operator guessing at the ids.
 */
async function requireKnownPlan(db: Db, planId: string): Promise<void> {
  const plans = (await listPlans(db)).map((p) => p.id);
  if (!plans.includes(planId)) {
    throw new AppError('not_found', `No plan "${planId}"; plans: ${plans.join(', ') || 'none'} (cli plan list).`);
  }
}
