import { defineConfig } from 'vitest/config';

// Files that must not run beside others, in a project of their own that runs after the rest,
// one file at a time, with its own Kafka broker and database (each project runs the global
// setup): those that stop and restart their run's broker (test/services/kafka-control.ts), which
// no other test may see go away; and those that evaluate every organization's alert thresholds
// and deliver every due webhook, which would act on, and be timed by, another file's alerts;
// and those that flood a server on purpose (300 connections of made-up keys, bodies meant to
// stall a parser) and check that it still answers in time, which another file beside them would
// both slow down and be slowed by; and the bench's smoke run, which floods its own servers.
const oneAtATime = [
  'test/billing-worker-kafka-outages.test.ts',
  'test/healthz-usage-bus.test.ts',
  'test/kafka-sink-outage.test.ts',
  'test/dashboard-alerts.test.ts',
  'test/dashboard-e2e.test.ts',
  'test/dashboard-italian.test.ts',
  'test/api-key-flood.test.ts',
  'test/mcp-request-body.test.ts',
  'test/bench-smoke.test.ts',
];

const shared = {
  exclude: ['node_modules/**', 'dist/**', '.data/**'],
  globalSetup: ['test/setup/global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    projects: [
      // Two files at a time on every machine: most of a file's time is spent waiting on child
      // processes, PostgreSQL, Kafka and timers, and vitest's default on 2 cores is one (README,
      // "Two commands", has the figures). Every test makes its own organization, keys and rows (or
      // database), and reads only its own, so files do not depend on each other's state.
      { test: { ...shared, name: 'suite', include: ['**/*.test.ts'], exclude: [...shared.exclude, ...oneAtATime], maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'one at a time', include: oneAtATime, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
