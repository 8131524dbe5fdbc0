import { open } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { InvalidArgumentError, type Command } from 'commander';
import {
  DEFAULT_LATEST_YEAR, generateDossiers, LATEST_YEAR_RANGE, latestYearRefusal, MAX_SAMPLE_COMPANIES, pickSampleFiscalCodes,
} from '../../../core/sample-data/index.js';
import type { CliContext } from '../../context.js';
import { createLineWriter } from '../../line-writer.js';
import { parseInteger, parseNonNegativeInt, parsePositiveInt } from './parse-options.js';
import { writeFailureReason } from './write-failure-reason.js';

// Refused here, before the file is opened, rather than by the generator's own check part way in.
function parseLatestYear(value: string): number {
  const year = parseInteger(value);
  const refusal = latestYearRefusal(year);
  if (refusal !== null) throw new InvalidArgumentError(refusal);
  return year;
}

function parseSampleCount(value: string): number {
  const count = parseNonNegativeInt(value);
  if (count > MAX_SAMPLE_COMPANIES) throw new InvalidArgumentError(`at most ${MAX_SAMPLE_COMPANIES}: each company needs a VAT number of its own, and more would repeat them`);
  return count;
}

export function registerSampleCommands(program: Command, context: () => CliContext): void {
  const sample = program
    .command('sample')
    .description('Synthetic Italian sample companies (clearly labelled source "synthetic-sample").');

  sample
    .command('generate')
    .description('Write N deterministic synthetic companies as JSON Lines, the format `cli import` reads. '
      + 'The same --count and --seed always give the same file.')
    .option('--count <n>', `number of companies, at most ${MAX_SAMPLE_COMPANIES} (default: SAMPLE_COMPANIES)`, parseSampleCount)
    .option('--seed <s>', 'random seed (default: SAMPLE_SEED)', parseInteger)
    .option('--latest-year <year>', `most recent fiscal year with filed accounts, ${LATEST_YEAR_RANGE.min} to ${LATEST_YEAR_RANGE.max}`, parseLatestYear, DEFAULT_LATEST_YEAR)
    .option('--with-changes', 'also write previousValue, yoyChange and employeesYoY (the importer derives them otherwise)')
    .requiredOption('--out <file>', 'output file; "-" writes to standard output')
    .action(async (opts: { count?: number; seed?: number; latestYear: number; withChanges?: boolean; out: string }) => {
      const ctx = context();
      const count = opts.count ?? ctx.config.SAMPLE_COMPANIES;
      const seed = opts.seed ?? ctx.config.SAMPLE_SEED;
      const started = performance.now();
      // Said as import's --rejects says it ("no such directory"), not as Node's "ENOENT: …, open '…'".
      const cannotWrite = (err: unknown) => new Error(`cannot write ${opts.out}: ${writeFailureReason(err)}`, { cause: err });
      // Opened before the first line is made, so a path that cannot be written is refused at once.
      const file = opts.out === '-' ? undefined : await open(opts.out, 'w').catch((err: unknown) => {
        throw cannotWrite(err);
      });
      const out: Writable = file ? file.createWriteStream() : process.stdout;
      // A write that fails between two waits for 'drain' (a full disk) is said when the next one ends.
      let failed: Error | undefined;
      if (file) out.on('error', (err) => (failed ??= err));
      try {
        const lines = createLineWriter(out);
        for (const dossier of generateDossiers({ count, seed, latestYear: opts.latestYear, includeDerivedChanges: Boolean(opts.withChanges) })) {
          if (failed) throw failed;
          await lines.line(JSON.stringify(dossier));
        }
        await lines.flush();
        if (file) await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
        if (failed) throw failed;
      } catch (err) {
        throw file ? cannotWrite(err) : err;
      }
      const seconds = (performance.now() - started) / 1000;
      process.stderr.write(`wrote ${count} synthetic companies (seed ${seed}) to ${opts.out === '-' ? 'stdout' : opts.out} in ${seconds.toFixed(1)} s\n`);
    });

  sample
    .command('codes')
    .description('Print fiscal codes of companies in the store, mixing 11-digit and 16-character codes, large and small companies.')
    .option('--count <n>', 'how many codes', parsePositiveInt, 24)
    .action(async (opts: { count: number }) => {
      const ctx = context();
      const { db } = await ctx.database();
      const codes = await pickSampleFiscalCodes(db, opts.count);
      if (codes.length === 0) process.stderr.write('the company store is empty: run `cli sample generate --out FILE` then `cli import FILE`\n');
      for (const code of codes) ctx.out(code);
    });
}
