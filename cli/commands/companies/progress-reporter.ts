import type { ImportProgress } from '../../../core/companies/import/index.js';

// Import progress on stderr (stdout keeps the summary and rejections). On a terminal: one bar
// redrawn in place; otherwise (CI, pipes, log files) a plain line every few seconds. The share
// shown is of the file's bytes written to the database (progress.bytesDone), not read: reads run
// ahead by the batches parsed and in flight, so 100% would come before the last batch was written.

export interface ProgressReporter {
  update(progress: ImportProgress): void;
  /** A line for the operator (shown with --quiet too): on a terminal it replaces the bar, which the next update redraws below it. */
  message(text: string): void;
  done(): void;
}

const BAR = 24;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export interface ProgressReporterOptions {
  quiet?: boolean;
  intervalMs?: number;
  /** The file's size, of which the share and ETA are; null (stdin): neither is shown. */
  totalBytes?: number | null;
}

export function createProgressReporter(stream: NodeJS.WriteStream, options: ProgressReporterOptions = {}): ProgressReporter {
  const started = performance.now();
  const tty = Boolean(stream.isTTY);
  const interval = options.intervalMs ?? (tty ? 150 : 5_000);
  let lastDraw = 0;
  let drawn = false;

  const total = options.totalBytes ?? null;
  const fractionOf = (p: ImportProgress) => (total === null ? null : total > 0 ? Math.min(1, p.bytesDone / total) : 1);

  function line(p: ImportProgress): string {
    const fraction = fractionOf(p);
    const elapsed = (performance.now() - started) / 1000;
    const rate = p.lines / Math.max(elapsed, 0.001);
    const eta = fraction && fraction > 0 ? (elapsed * (1 - fraction)) / fraction : NaN;
    const pct = fraction === null ? '' : `${String(Math.floor(fraction * 100)).padStart(3)}%`;
    const parts = [`${fmt(p.lines)} lines`, `${fmt(rate)}/s`];
    if (fraction !== null) parts.push(`ETA ${duration(eta)}`);
    if (p.rejected > 0) parts.push(`${fmt(p.rejected)} rejected`);
    if (!tty) return `import: ${pct ? pct.trim() + ', ' : ''}${parts.join(', ')}`;
    const filled = fraction === null ? 0 : Math.round(Math.min(1, fraction) * BAR);
    const bar = fraction === null ? '' : `[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${pct}  `;
    return `${bar}${parts.join('  ')}`;
  }

  let latest: ImportProgress = { lines: 0, accepted: 0, rejected: 0, created: 0, updated: 0, unchanged: 0, bytesDone: 0 };
  const draw = () => {
    lastDraw = performance.now();
    if (tty) stream.write(`\r\x1b[2K${line(latest)}`);
    else stream.write(line(latest) + '\n');
    drawn = true;
  };
  // The counts change only as lines are counted and batches written: while the database holds
  // a batch (a lock, a slow disk, a big batch) none come, and the line every 5 s the docs
  // promise stopped (one in 17.8 s, seen). The timer draws the latest counts then, the rate
  // falling, so a log shows the import alive and waiting. Unref'd: it never keeps the CLI up.
  const timer = options.quiet ? undefined : setInterval(() => {
    if (performance.now() - lastDraw >= interval) draw();
  }, Math.max(50, interval / 5));
  timer?.unref();

  return {
    update(progress) {
      if (options.quiet) return;
      latest = progress;
      if (performance.now() - lastDraw < interval) return;
      draw();
    },
    message(text) {
      stream.write(tty && drawn && !options.quiet ? `\r\x1b[2K${text}\n` : `${text}\n`);
    },
    done() {
      clearInterval(timer);
      if (tty && drawn && !options.quiet) stream.write('\r\x1b[2K');
    },
  };
}
