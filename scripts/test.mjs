#!/usr/bin/env node
// `npm test`: type-check, lint, then the whole vitest suite (which starts Postgres and Kafka
// itself: see test/setup/global-setup.ts). Extra arguments go to vitest, e.g.
// `npm test -- core/config`. Every step runs even after a failure, so one run shows every
// problem; the exit code is the first failure's.
//
// The last line printed is a plain "tests: N passed, N failed[, N skipped]" tally read from
// vitest's JSON report, because CI judges a run by that closing line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const vitestArgs = process.argv.slice(2);
const reportDir = mkdtempSync(path.join(os.tmpdir(), 'icd-vitest-report-'));
const reportFile = path.join(reportDir, 'report.json');

const steps = [
  { name: 'typecheck', command: bin('tsc'), args: ['--noEmit', '-p', 'tsconfig.json'] },
  { name: 'lint', command: bin('eslint'), args: ['.'] },
  {
    name: 'tests',
    command: bin('vitest'),
    args: ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`, ...vitestArgs],
  },
];

const results = [];
for (const step of steps) {
  process.stdout.write(`\n━━ ${step.name}: ${[path.basename(step.command), ...step.args].join(' ')}\n`);
  const began = Date.now();
  const code = await run(step.command, step.args);
  const seconds = (Date.now() - began) / 1000;
  results.push({ name: step.name, code, seconds });
  process.stdout.write(`━━ ${step.name}: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${seconds.toFixed(1)} s\n`);
}

const tally = readTally(reportFile);
rmSync(reportDir, { recursive: true, force: true });

process.stdout.write('\nsummary\n');
for (const r of results) process.stdout.write(`  ${r.code === 0 ? 'ok    ' : 'FAILED'}  ${r.name.padEnd(10)} ${r.seconds.toFixed(1).padStart(6)} s\n`);
const firstFailure = results.find((r) => r.code !== 0);
if (!tally) {
  process.stdout.write('  (vitest wrote no report: it failed before running tests)\n');
} else if (tally.total === 0) {
  process.stdout.write('  (vitest ran no test)\n');
}
// A run that executed no test is a failure, not a pass; so is a failed test whatever vitest's
// own exit code says (a dependency's exit hook once turned failures into exit 0).
const testsFailed = !tally || tally.total === 0 || tally.failed > 0;
const exitCode = firstFailure ? firstFailure.code : testsFailed ? 1 : 0;
const t = tally ?? { passed: 0, failed: 0, skipped: 0 };
process.stdout.write(`tests: ${t.passed} passed, ${t.failed} failed${t.skipped ? `, ${t.skipped} skipped` : ''}\n`);
process.exitCode = exitCode;

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit' });
    // Ctrl-C reaches the child through the terminal; we only wait for it to finish.
    const ignore = () => undefined;
    process.on('SIGINT', ignore);
    const finish = (code) => {
      process.off('SIGINT', ignore);
      resolve(code);
    };
    child.on('error', (err) => {
      process.stderr.write(`could not run ${command}: ${err.message}\n`);
      finish(127);
    });
    child.on('exit', (code, signal) => finish(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1)));
  });
}

function readTally(file) {
  try {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    const passed = report.numPassedTests ?? 0;
    // A test file that fails to load has no failed tests of its own: count it as a failure.
    const brokenFiles = (report.testResults ?? []).filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0).length;
    const failed = (report.numFailedTests ?? 0) + brokenFiles;
    const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
    return { passed, failed, skipped, total: passed + failed };
  } catch {
    return undefined;
  }
}
