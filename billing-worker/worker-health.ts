import { checkHealth, valueWithin } from '../core/http-server/index.js';
import type { UsageBacklog } from '../core/usage/index.js';
import type { BillingWorker, BillingWorkerState } from './start-billing-worker.js';

// The same deadline as the other services' probes: a probe never hangs on a dead pool or on a
// broker that does not answer.
const DEADLINE_MS = 1_000;

interface WorkerFigures {
  bus: BillingWorker['bus'];
  /** Null when it could not be read within the deadline (the database, or Kafka, away). */
  backlog: UsageBacklog | null;
  lastBatchAt: string | null;
  /** Dead letters not resolved (usage_dead_letters, resolved_at null): served, not billed until
   * replayed. Read at most every few seconds (open-dead-letters.ts); null when unreadable. */
  openDeadLetters: number | null;
}

export interface WorkerHealthAnswer {
  status: 200 | 503;
  body:
    | ({ status: 'ok' } & WorkerFigures)
    | ({
        status: 'unavailable';
        checks: { database: 'ok' | 'unreachable'; consumer: BillingWorkerState };
        /** Consumer `stalled`: when the batch that stalled began. */
        batchInFlightSince?: string;
      } & WorkerFigures);
}

/**
 * The billing worker's /healthz: 200 while its consumer is consuming and the database answers,
 * else 503 naming which. Either way the backlog (events published and not yet applied) and
 * when this process last applied a batch: a worker that consumes nothing while the backlog
 * grows is stuck, whatever its checks say; and the dead letters not resolved. Three cheap reads,
 * side by side, each bounded.
 */
export async function checkWorkerHealth(
  deps: { checkDatabase(): Promise<void>; worker: BillingWorker; openDeadLetters(): Promise<number> },
  deadlineMs = DEADLINE_MS,
): Promise<WorkerHealthAnswer> {
  const { worker } = deps;
  const [database, backlog, openDeadLetters] = await Promise.all([
    checkHealth({ database: deps.checkDatabase }, deadlineMs),
    valueWithin(deadlineMs, () => worker.backlog(), null),
    valueWithin(deadlineMs, deps.openDeadLetters, null),
  ]);
  const consumer = worker.state();
  const figures: WorkerFigures = { bus: worker.bus, backlog, lastBatchAt: worker.stats().lastBatchAt?.toISOString() ?? null, openDeadLetters };
  if (database.status === 200 && consumer === 'consuming') return { status: 200, body: { status: 'ok', ...figures } };
  const databaseState = database.body.status === 'ok' ? 'ok' : database.body.checks.database;
  const stalledSince = worker.stalledSince();
  return { status: 503, body: { status: 'unavailable', checks: { database: databaseState, consumer }, ...(stalledSince ? { batchInFlightSince: stalledSince.toISOString() } : {}), ...figures } };
}
