import { defineConfig } from 'vitest/config';

// These stop and restart their run's Kafka broker (test/services/kafka-control.ts): a project of
// their own, with its own broker and database (each project runs the global setup), one file at
// a time, after the rest, so no other test sees the broker go away.
const brokerRestarts = ['test/billing-worker-kafka-outages.test.ts', 'test/healthz-usage-bus.test.ts', 'test/kafka-sink-outage.test.ts'];

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
      // "Tests", has the figures). Every test makes its own organization, keys and rows (or
      // database), so files do not depend on each other's state.
      { test: { ...shared, name: 'suite', include: ['**/*.test.ts'], exclude: [...shared.exclude, ...brokerRestarts], maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'broker restarts', include: brokerRestarts, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
