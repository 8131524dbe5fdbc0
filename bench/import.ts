// npm run bench:import [-- --count 100000 --reports 5000 --batch-size 500 --workers 2 --seed 1 --keep]
//
// Into a FRESH scratch database (a new database on DATABASE_URL's server, or an embedded
// PostgreSQL in a temporary folder when DATABASE_URL is unset): generate N synthetic companies
// to a JSON Lines file, import the file the way `cli import` does, then time company-report
// assembly for random existing companies. Targets: >= 3,000 companies/s; report p99 < 5 ms.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultParserThreads } from '../cli/commands/companies/import-command.js';
import { openLineSource } from '../cli/commands/companies/read-lines.js';
import { createCompanyStore } from '../core/companies/company-store.js';
import { importDossiers } from '../core/companies/import/index.js';
import { parseConfig } from '../core/config/index.js';
import { createDb, migrateLatest } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { generateDossiers } from '../core/sample-data/index.js';
import { processCpu } from './process-cpu.js';
import { openScratchDatabase } from './scratch-database.js';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    reports: { type: 'string', default: '5000' },
    'batch-size': { type: 'string', default: '500' },
    workers: { type: 'string' },
    seed: { type: 'string', default: '20240601' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  process.stdout.write('usage: npm run bench:import -- [--count N=100000] [--reports N=5000] [--batch-size N=500] [--workers N] [--seed S] [--keep]\n'
    + '  --workers: parser threads (0 parses on the main thread; default as `cli import`)\n'
    + '  --keep leaves the scratch database (and the generated file) in place for inspection.\n');
  process.exit(0);
}
const count = Number(args.count);
const reports = Number(args.reports);
const batchSize = Number(args['batch-size']);
const seed = Number(args.seed);
const config = parseConfig(process.env);
const logger = createLogger({ level: 'warn' });
const log = (line: string) => process.stderr.write(`[bench:import] ${line}\n`);
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const workDir = await mkdtemp(path.join(os.tmpdir(), 'bench-import-'));
// The embedded server runs as the postgres user when we are root: it must traverse this folder.
await chmod(workDir, 0o755);
const scratch = await openScratchDatabase({ prefix: 'bench_import', databaseUrl: config.DATABASE_URL, workDir, logger });
const db = createDb({ connectionString: scratch.url, poolMax: 4, applicationName: 'bench-import' });

try {
  await migrateLatest(db);
  log(`scratch database ready (${scratch.description}); load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);

  // 1. Generate the file.
  const file = path.join(workDir, 'companies.jsonl');
  let started = performance.now();
  const out = createWriteStream(file);
  let chunk: string[] = [];
  for (const dossier of generateDossiers({ count, seed })) {
    chunk.push(JSON.stringify(dossier) + '\n');
    if (chunk.length >= 200) {
      if (!out.write(chunk.join(''))) await once(out, 'drain');
      chunk = [];
    }
  }
  out.end(chunk.join(''));
  await once(out, 'finish');
  const generateSeconds = (performance.now() - started) / 1000;
  const fileBytes = (await stat(file)).size;
  log(`generated ${fmt(count)} companies (${fmt(fileBytes / 1e6)} MB) in ${fmt(generateSeconds, 1)} s`);

  // 2. Import it, exactly as `cli import FILE` does.
  const source = await openLineSource(file, process.stdin);
  const workers = args.workers === undefined ? defaultParserThreads(source.bytes) : Number(args.workers);
  let lastLog = performance.now();
  // CPU time of this process (parse, validate, prepare, send) per company: on a machine busy
  // with other work, a steadier signal than the wall-clock rate.
  // Postgres's share: CPU time of the scratch database's backends, read from /proc (the
  // server runs on this machine), so the per-company split shows where time goes.
  const backendsBefore = await backendCpuMs();
  const backgroundBefore = await backgroundCpuMs();
  const cpuBefore = process.cpuUsage();
  started = performance.now();
  const summary = await importDossiers({
    db,
    blocks: source.blocks,
    batchSize,
    workers,
    onProgress: (p) => {
      if (performance.now() - lastLog < 10_000) return;
      lastLog = performance.now();
      log(`  ${fmt(p.lines)} imported (${fmt(p.lines / ((lastLog - started) / 1000))}/s)`);
    },
  });
  const importSeconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const importCpuMsPerCompany = (cpu.user + cpu.system) / 1000 / Math.max(1, summary.accepted);
  const backendsAfter = await backendCpuMs();
  const backgroundAfter = await backgroundCpuMs();
  // NaN when /proc showed none of them (a server on another machine).
  const perCompany = (before: Map<number, number>, after: Map<number, number>) =>
    after.size === 0 ? NaN : [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0) / Math.max(1, summary.accepted);
  const postgresCpuMsPerCompany = perCompany(backendsBefore, backendsAfter);
  const backgroundCpuMsPerCompany = perCompany(backgroundBefore, backgroundAfter);
  if (summary.parserThreadsUnavailable) log(`WARNING: parser threads unavailable: ${summary.parserThreadsUnavailable}`);
  if (summary.rejected > 0) log(`WARNING: ${summary.rejected} rejected, first: line ${summary.rejections[0]!.line}: ${summary.rejections[0]!.reason}`);
  const importRate = summary.accepted / importSeconds;

  // 3. Company report assembly at this size.
  await db.raw('ANALYZE');
  const { rows } = await db.raw<{ rows: { fiscal_code: string }[] }>('SELECT fiscal_code FROM companies ORDER BY random() LIMIT ?', [reports]);
  const codes = rows.map((r) => r.fiscal_code);
  const store = createCompanyStore({ db, queryTimeoutMs: 10_000, logger });
  for (const code of codes.slice(0, Math.min(200, codes.length))) await store.companyReport(code); // warm up
  const timings: number[] = [];
  for (const code of codes) {
    const t = performance.now();
    const report = await store.companyReport(code);
    timings.push(performance.now() - t);
    if (report === null) throw new Error(`company ${code} not found`);
  }
  timings.sort((a, b) => a - b);
  const pct = (p: number) => timings[Math.min(timings.length - 1, Math.floor((p / 100) * timings.length))] ?? NaN;

  const result = {
    companies: count,
    fileMB: Math.round(fileBytes / 1e6),
    generateSeconds: Number(generateSeconds.toFixed(1)),
    importSeconds: Number(importSeconds.toFixed(1)),
    companiesPerSecond: Math.round(importRate),
    importNodeCpuMsPerCompany: Number(importCpuMsPerCompany.toFixed(3)),
    importPostgresCpuMsPerCompany: Number(postgresCpuMsPerCompany.toFixed(3)),
    importPostgresBackgroundCpuMsPerCompany: Number(backgroundCpuMsPerCompany.toFixed(3)),
    parserThreads: summary.parserThreads,
    created: summary.created,
    rejected: summary.rejected,
    reportSamples: timings.length,
    reportP50Ms: Number(pct(50).toFixed(2)),
    reportP99Ms: Number(pct(99).toFixed(2)),
    reportMaxMs: Number((timings.at(-1) ?? NaN).toFixed(2)),
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(1))),
    cpus: os.cpus().length,
  };
  process.stdout.write([
    '',
    `import:  ${fmt(count)} companies in ${fmt(importSeconds, 1)} s = ${fmt(importRate)} companies/s (target >= 3,000)  [generation alone: ${fmt(count / generateSeconds)}/s]`,
    `         parser threads: ${summary.parserThreads}; CPU per company: Node (all threads) ${fmt(importCpuMsPerCompany, 3)} ms, Postgres backends ${fmt(postgresCpuMsPerCompany, 3)} ms`
      + ` + its WAL writer, checkpointer and other background processes ${fmt(backgroundCpuMsPerCompany, 3)} ms`,
    `report:  company report over ${fmt(timings.length)} random companies: p50 ${fmt(pct(50), 2)} ms, p99 ${fmt(pct(99), 2)} ms, max ${fmt(timings.at(-1) ?? NaN, 2)} ms (target p99 < 5 ms)`,
    `machine: load average ${result.loadAverage.join(' ')} on ${result.cpus} CPUs (other work on the machine slows both figures)`,
    JSON.stringify(result),
    '',
  ].join('\n'));
} finally {
  await db.destroy();
  if (args.keep) log(`kept: ${scratch.description}; file in ${workDir}`);
  else {
    await scratch.drop();
    await rm(workDir, { recursive: true, force: true });
  }
}

/** utime + stime of each backend on the scratch database, in ms; empty when /proc is not readable. */
async function backendCpuMs(): Promise<Map<number, number>> {
  return cpuMsOf('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
}

/**
 * The same for the server's background processes (WAL writer, checkpointer, background
 * writer ...), which write what the backends leave to them. On a shared server (DATABASE_URL)
 * they also serve the other databases; during the bench they work mostly for the import.
 */
async function backgroundCpuMs(): Promise<Map<number, number>> {
  return cpuMsOf(`SELECT pid FROM pg_stat_activity WHERE datname IS NULL AND backend_type <> 'client backend'`);
}

async function cpuMsOf(pidsSql: string): Promise<Map<number, number>> {
  const { rows } = await db.raw<{ rows: { pid: number }[] }>(pidsSql);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const cpu = await processCpu(pid); // null: not on this machine, or gone
    if (cpu !== null) out.set(pid, cpu.ms);
  }
  return out;
}
