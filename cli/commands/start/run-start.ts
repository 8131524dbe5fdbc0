import type { Config } from '../../../core/config/index.js';
import { openDatabase } from '../../../core/db/index.js';
import type { Logger } from '../../../core/logging/index.js';
import { isCodeFault, type UsageConsumerFailure } from '../../../core/usage/index.js';
import { listenForStopSignals, quitAtOnceHint, type StopSignal } from '../../stop-signals.js';
import { startServices, type RunningService } from './start-services.js';

// How long a stop after the billing worker failed may take: the API and the tool server drain
// their calls for up to 5 s each, side by side, and the worker its batch in flight.
const FAILED_STOP_MS = 15_000;

/** `cli start`: opens the database, starts every service, prints the banner, and stops them on a signal or the billing worker's failure. */
export async function runStart(config: Config, logger: Logger, started: number): Promise<void> {
  // Listen for Ctrl-C before anything else: a signal that arrives while no listener is
  // registered kills the process outright (no clean stop), and whoever reads our banner may
  // signal us the instant it appears. A signal during start-up stops us once start-up ends.
  // The first SIGINT or SIGTERM stops everything cleanly; the copy of it that npm passes on is
  // the same Ctrl-C (cli/stop-signals.ts); a later one quits at once (quitNow), and so does the
  // first while the billing worker's failure is already stopping everything. The listeners go
  // when the command ends, however it ends: left behind a failed start-up, they would swallow
  // the next signal.
  let stopOn!: (signal: StopSignal) => void;
  const signalled = new Promise<StopSignal>((resolve) => (stopOn = resolve));
  let stoppingOnFailure = false;
  let quitting = false;
  const signals = listenForStopSignals({
    first: (signal) => (stoppingOnFailure ? void quitNow(signal) : stopOn(signal)),
    again: (signal) => void quitNow(signal),
  });
  // A failure to open (Postgres unreachable, a migration refused) closes what it opened itself.
  const opening = openDatabase(config, logger, 'start');

  // Whoever asks twice will not wait for the drain (calls in flight, the billing worker's batch,
  // up to seconds each): the rest dies with the process. Not the embedded server, which runs in
  // a session of its own (core/db/embedded-postgres.ts) and would outlive us, holding its port
  // and data folder against the next npm start: it is stopped first, fast (the sessions it cuts
  // off roll back, as at a crash). During start-up that waits for the database to be open (an
  // initdb, a migration building an index), so a third signal ends the process there and then
  // (cli/stop-signals.ts), and the line says so. With DATABASE_URL nothing of ours outlives us.
  async function quitNow(signal: StopSignal): Promise<void> {
    if (quitting) return;
    quitting = true;
    if (config.DATABASE_URL) {
      process.stdout.write(`\n${signal}: quitting at once, without waiting for calls in flight\n`);
      signals.raise(signal);
      return;
    }
    const waiting = startingUp ? ` (it is still being opened: ${signal === 'SIGINT' ? 'Ctrl-C' : 'SIGTERM'} once more ends this process now and leaves it running)` : '';
    process.stdout.write(`\n${signal}: quitting at once, without waiting for calls in flight; stopping the embedded PostgreSQL first${waiting}\n`);
    const database = await opening.catch(() => undefined);
    await database?.stopServerNow().catch((err: unknown) => logger.error('could not stop the embedded PostgreSQL', { err }));
    signals.raise(signal);
  }

  // Start-up is not cut short (an embedded server half made, a migration half run), but a
  // signal during it is answered at once, and start-up ends in a stop instead of the banner.
  let startingUp = true;
  let early: StopSignal | undefined;
  void signalled.then((signal) => {
    if (!startingUp) return;
    early = signal;
    process.stdout.write(`\n${signal}: stopping as soon as start-up has finished… (${quitAtOnceHint(signal)})\n`);
  });
  try {
    const database = await opening;
    let running: RunningService;
    try {
      running = await startServices(config, logger, database);
    } catch (err) {
      // startServices has stopped what it started; the embedded server goes too, and the error
      // (one line, from the CLI) ends the process with status 1.
      await database.close().catch((closeErr: unknown) => logger.error('could not close the database', { err: closeErr }));
      throw err;
    }
    startingUp = false;
    let failure: UsageConsumerFailure | undefined;
    if (early === undefined) {
      printBanner(running.demo, config.DATA_DIR, Date.now() - started);
      // Until Ctrl-C, or until the billing worker stops consuming for good: the API and the tool
      // server would then go on serving paid calls that nobody bills, with no balance or flag
      // ever stopping them. So everything stops, and the command fails saying why.
      const ended = await Promise.race([signalled.then((signal) => ({ signal })), running.failed.then((cause) => ({ failure: cause }))]);
      if ('signal' in ended) {
        process.stdout.write(`\n${ended.signal}: stopping… (${quitAtOnceHint(ended.signal)})\n`);
      } else {
        failure = ended.failure;
        stoppingOnFailure = true;
        // Whoever fixes a fault in the code needs where it was thrown.
        if (isCodeFault(failure.cause)) logger.error('the billing worker stopped on a fault in the code', { err: failure.cause });
        process.stdout.write('\nthe billing worker stopped consuming usage events: stopping… (Ctrl-C quits at once)\n');
      }
    }
    const failed = failure ? `the billing worker stopped consuming usage events: ${failure.message}` : undefined;
    if (failed) {
      // A batch stalled on a database that stopped answering (BILLING_BATCH_STALL_MS) cannot
      // drain, and the stop would wait for it for ever: past this, the process ends anyway.
      setTimeout(() => {
        process.stderr.write(`error: ${failed}. Everything was being stopped rather than serve calls that would never be billed, and the stop had not finished after ${FAILED_STOP_MS / 1000} s, so the process ends; run npm start again\n`);
        process.exit(1);
      }, FAILED_STOP_MS).unref();
    }
    const clean = await running.stop();
    await database.close();
    if (failed) throw new Error(`${failed}. Everything was stopped rather than serve calls that would never be billed; run npm start again`);
    if (!clean) throw new Error('stopped, but not cleanly: see the errors logged above');
    process.stdout.write('stopped cleanly\n');
  } finally {
    signals.dispose();
  }
}

function printBanner(demo: Awaited<ReturnType<typeof startServices>>['demo'], dataDir: string, ms: number) {
  const code = demo.sampleFiscalCodes[0] ?? '<fiscalCode>';
  const lines = [
    '',
    `Italian company data service is up (${(ms / 1000).toFixed(1)} s)`,
    '',
    `  API          ${demo.baseUrl}        docs: ${demo.baseUrl}/docs`,
    `  Tool server  ${demo.mcpEndpoint ?? `${demo.mcpUrl}/mcp`}`,
    demo.dashboardUrl ? `  Dashboard    ${demo.dashboardUrl}` : '',
    demo.operator ? `  Operator     ${demo.operator.email} / ${demo.operator.password ?? `(password not recorded, or changed since: npm run -s cli -- operator reset-password --email ${demo.operator.email} sets a new one)`}` : '',
    '',
    `  Demo API key ${demo.apiKey}`,
    `  Organization ${demo.organizationId}`,
    `  Sample codes ${demo.sampleFiscalCodes.slice(0, 6).join(' ')} …`,
    '',
    `  Try:  curl -H "Authorization: Bearer ${demo.apiKey}" ${demo.baseUrl}/companies/${code}/report`,
    '',
    `  All of this is in ${dataDir}/demo.json. Ctrl-C stops everything.`,
    '',
  ].filter((l, i, all) => l !== '' || all[i - 1] !== '');
  process.stdout.write(lines.join('\n') + '\n');
}
