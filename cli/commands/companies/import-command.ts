import { availableParallelism } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_BATCH_SIZE, importDossiers, MAX_BATCH_SIZE } from '../../../core/companies/import/index.js';
import type { CliContext } from '../../context.js';
import { quitAtOnceHint } from '../../stop-signals.js';
import { parseNonNegativeInt, parsePositiveInt } from './parse-options.js';
import { createProgressReporter } from './progress-reporter.js';
import { openLineSource } from './read-lines.js';
import { openRejectsFile, refuseRejectsOverInput } from './rejects-file.js';
import { stopOnSignal, type StopOnSignal } from './stop-on-signal.js';

const MAX_PRINTED_REJECTIONS = 100;
// An import that ran to its end with lines rejected: its other lines are imported, so a nightly
// script must tell it from a failure (status 1, which main gives every error and commander every
// usage error: run it again) and from an interrupt (the signal, 130 or 143): look at the rejects.
const EXIT_LINES_REJECTED = 2;
const NEWLINE = Buffer.from('\n');
// Below this a file parses faster on the main thread than parser threads take to start.
const SMALL_FILE_BYTES = 1 << 20;

/** Parser threads when --workers is not given: two at most (the writer and Postgres need CPU too). */
export function defaultParserThreads(fileBytes: number | null): number {
  if (fileBytes !== null && fileBytes < SMALL_FILE_BYTES) return 0;
  return Math.min(2, Math.max(1, availableParallelism() - 1));
}

// A parser thread only works while it has a CPU, and the main thread (which feeds the writers)
// and Postgres need CPUs too, so beyond the CPU count more threads only wait; each still costs
// its start-up (~0.9 s of CPU and ~40 MB under tsx: 16 threads took 10 s and 850 MB on two
// cores, 1,000 ran into the 30 s start timeout). Twice the CPUs leaves room to experiment.
function maxParserThreads(): number {
  return 2 * availableParallelism();
}

function parseParserThreads(value: string): number {
  const n = parseNonNegativeInt(value);
  const max = maxParserThreads();
  if (n > max) throw new InvalidArgumentError(`at most ${max} parser threads (twice this machine's ${availableParallelism()} CPUs): more only wait for a CPU`);
  return n;
}

function parseBatchSize(value: string): number {
  const n = parsePositiveInt(value);
  if (n > MAX_BATCH_SIZE) throw new InvalidArgumentError(`at most ${MAX_BATCH_SIZE}: a batch's companies are held in memory until it is written, and larger batches write no faster`);
  return n;
}

export function registerImportCommand(program: Command, context: () => CliContext): void {
  program
    .command('import')
    .description('Import companies from a JSON Lines file (format: docs/import-format.md). Upserts by fiscal code, '
      + 'each company atomically; re-importing the same file changes nothing. Rejected lines are listed with their '
      + 'line number and reason; the other lines are imported. Ctrl-C stops reading, writes the lines read and '
      + 'prints the summary marked interrupted (a second Ctrl-C quits at once).')
    .addHelpText('after', [
      '',
      'Exit status (see docs/import-format.md):',
      '  0    done, no line rejected',
      '  2    done, some lines rejected: the other lines are imported',
      '  1    failed or refused (a usage error, an unreadable input or rejects file,',
      '       the database unreachable): nothing imported, or the batches written',
      '       before the failure; run it again',
      '  130  interrupted by Ctrl-C (143: SIGTERM), ending by that signal: the lines',
      '       read are written and the summary says how many',
    ].join('\n'))
    .argument('<file>', 'JSON Lines file, one company dossier per line; "-" reads standard input, as it reads a named pipe (<(zcat file.gz))')
    .option('--batch-size <n>', `companies written per database transaction, 1 to ${MAX_BATCH_SIZE}`, parseBatchSize, DEFAULT_BATCH_SIZE)
    .option('--rejects <file>', 'also write each rejected line, unchanged, to this file, which may not be the input (fix it, then import it with --rejects naming another file)')
    .option('--workers <n>', `parser threads, 0 to ${maxParserThreads()} (twice the CPUs): JSON parsing and validation off the main `
      + 'thread; 0 parses on the main thread (default: 2 on a machine with 3+ CPUs, 1 with 2, 0 for files under 1 MB)', parseParserThreads)
    .option('--quiet', 'no progress output')
    .action(async (file: string, opts: { batchSize: number; rejects?: string; quiet?: boolean; workers?: number }) => {
      const ctx = context();
      // Until the import has finished, an exit is a failure: main.ts ends the CLI at once when
      // the reader of its output goes away (progress on stderr, mid-import), and status 0 then
      // told a script "done" with the rest of the file never read.
      process.exitCode = 1;
      // Stops reading when a signal comes (stop-on-signal.ts) or the rejects file cannot be written.
      const stop = new AbortController();
      const source = await openLineSource(file, process.stdin, { stop: stop.signal });
      let summary;
      let rejectsClosed: Promise<void> | undefined;
      let signals: StopOnSignal | undefined;
      try {
        // Before the rejects file is opened for writing, which would empty it.
        if (opts.rejects) await refuseRejectsOverInput(opts.rejects, { file, identity: source.identity });
        const { db } = await ctx.database();
        const rejectsFile = opts.rejects ? await openRejectsFile(opts.rejects, () => stop.abort()) : undefined;
        // Awaited after the summary: if writing it failed, what was written is still worth
        // saying first. If the import fails, its own error is the one reported.
        const closeRejects = () => {
          rejectsClosed ??= rejectsFile?.close();
          rejectsClosed?.catch(() => undefined);
        };
        const progress = createProgressReporter(process.stderr, { quiet: opts.quiet, totalBytes: source.bytes });
        signals = stopOnSignal((signal) => {
          progress.message(`import: stopping (${signal}): no further lines are read, those read are written; ${quitAtOnceHint(signal)}`);
          stop.abort();
        });
        try {
          summary = await importDossiers({
            db,
            blocks: source.blocks,
            batchSize: opts.batchSize,
            workers: opts.workers ?? defaultParserThreads(source.bytes),
            onProgress: (p) => progress.update(p),
            // Each line as read, its break included; a last line without one gets "\n", so the
            // line rejected after it (a database refusal comes later) starts a line of its own.
            onReject: rejectsFile ? (_r, line) => rejectsFile.write(line.at(-1) === 0x0a ? line : Buffer.concat([line, NEWLINE])) : undefined,
          });
        } finally {
          progress.done();
          closeRejects();
        }
      } finally {
        signals?.dispose();
        // A failed import can stop while stdin (or a FIFO) still waits for a quiet producer's
        // next line (core/companies/import/mark-idle.ts); ended here, the CLI exits now, not then.
        source.close();
      }

      // Finished: its status says what it did, whether or not the summary finds a reader. A
      // failure still to come (closing the rejects file, the database) makes it 1 (main.ts),
      // an interrupt the signal (stop-on-signal.ts).
      process.exitCode = summary.rejected > 0 ? EXIT_LINES_REJECTED : 0;
      const seconds = summary.durationMs / 1000;
      // Grouped as the progress lines group it (progress-reporter.ts).
      const rate = Math.round(summary.lines / Math.max(seconds, 0.001)).toLocaleString('en-US');
      if (summary.parserThreadsUnavailable !== undefined) {
        process.stderr.write(`note: parser threads unavailable (${summary.parserThreadsUnavailable}); parsed on the main thread\n`);
      }
      const threads = summary.parserThreads > 0 ? `, ${summary.parserThreads} parser thread${summary.parserThreads === 1 ? '' : 's'}` : '';
      // Every line read was written or rejected, so the counts are what the database holds.
      const interrupted = signals.stoppedBy();
      const rest = source.cutShort() ? 'the rest of the input was not read' : 'the input was read to its end';
      const stopped = interrupted ? ` (interrupted by ${interrupted}: ${rest})` : source.cutShort() ? ` (stopped: ${rest})` : '';
      ctx.out(`imported ${summary.lines} line${summary.lines === 1 ? '' : 's'} in ${seconds.toFixed(1)} s (${rate}/s${threads}): ${summary.created} created, `
        + `${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.rejected} rejected${stopped}`);
      // Every reason into a file or a pipe (a script's, one fixing the lines); on a terminal, the
      // first 100: a person reads those, and sends the output to a file for the rest.
      const listed = ctx.outIsTerminal ? MAX_PRINTED_REJECTIONS : Number.POSITIVE_INFINITY;
      for (const r of summary.rejections.slice(0, listed)) ctx.out(`line ${r.line}: ${r.reason}`);
      if (summary.rejections.length > listed) {
        ctx.out(`… ${summary.rejections.length - listed} more rejected lines: send the output to a file to list every one${opts.rejects ? ` (the lines themselves are in ${opts.rejects})` : ' (--rejects FILE keeps the lines themselves)'}`);
      }
      await rejectsClosed;
    });
}
