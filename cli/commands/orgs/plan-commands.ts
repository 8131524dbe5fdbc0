import type { Command } from 'commander';
import { ensureDefaultPlans, getPlan, listPlans } from '../../../core/billing/index.js';
import type { CliContext } from '../../context.js';
import { table } from './cli-format.js';

export function registerPlanCommands(program: Command, context: () => CliContext): void {
  const plan = program.command('plan').description('Plans: products, measures and limits.');
  const db = async () => {
    const d = (await context().database()).db;
    await ensureDefaultPlans(d);
    return d;
  };

  plan
    .command('list')
    .description('List plans.')
    .action(async () => {
      const plans = await listPlans(await db());
      const rows = plans.map((p) => [p.id, p.name, `${p.limits.perSecond}/s burst ${p.limits.burst}, ${p.limits.perMinute}/min`, String(p.creditsPerPeriod), p.callsCapPerPeriod === null ? '-' : String(p.callsCapPerPeriod), String(p.products.length)]);
      for (const line of table(['ID', 'NAME', 'RATE LIMITS', 'CREDITS/MONTH', 'CALLS CAP', 'PRODUCTS'], rows)) context().out(line);
    });

  plan
    .command('show')
    .description("Show a plan's limits and products.")
    .argument('<plan>', 'plan id')
    .action(async (id: string) => {
      const p = await getPlan(await db(), id);
      const out = context().out;
      out(`id:       ${p.id}`);
      out(`name:     ${p.name}`);
      out(`limits:   ${p.limits.perSecond}/s, burst ${p.limits.burst}, ${p.limits.perMinute}/min`);
      out(`credits:  ${p.creditsPerPeriod} per month`);
      out(`calls:    ${p.callsCapPerPeriod ?? 'no cap'} per month`);
      out('products:');
      for (const line of table(['  PRODUCT', 'KIND', 'QUANTITY', 'UNIT'], p.products.map((x) => [`  ${x.product}`, x.kind, String(x.quantity), x.unit]))) out(line);
    });
}
