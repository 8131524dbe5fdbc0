// The /healthz answer of every HTTP service (API, tool server, dashboard): liveness plus what a
// paid call needs, checked cheaply: one database round trip, bounded so a probe never hangs on a
// dead pool, and, on services that publish usage to Kafka, whether the producer is connected.
// No key needed and nothing about the data revealed.

const DEADLINE_MS = 1_000;

type CheckState = 'ok' | 'unreachable';

export interface HealthChecks {
  /** One cheap round trip (SELECT 1): the process's OpenDatabase.probe, which holds at most one
   * pooled connection however many probes wait on it. */
  database(): Promise<unknown>;
  /**
   * Whether usage events can be made durable now (UsageSink.reachable), on services whose bus
   * is not the database itself: a process whose Kafka is unreachable (a wrong KAFKA_BROKERS, a
   * broker down) refuses every paid call with 503, so it must not pass for healthy.
   */
  usageBus?(): boolean;
  /** Figures an SRE alerts on, in the body of both answers; they do not change its status
   * (the API's and the tool server's `rateLimitStore`). */
  figures?(): Record<string, unknown>;
}

export interface HealthAnswer {
  status: 200 | 503;
  body: ({ status: 'ok' } | { status: 'unavailable'; checks: { database: CheckState; usageBus?: CheckState } }) & Record<string, unknown>;
}

export async function checkHealth(checks: HealthChecks, deadlineMs = DEADLINE_MS): Promise<HealthAnswer> {
  const database = await valueWithin(deadlineMs, () => checks.database().then(() => true), false);
  const usageBus = checks.usageBus?.();
  const figures = checks.figures?.() ?? {};
  if (database && usageBus !== false) return { status: 200, body: { status: 'ok', ...figures } };
  const state = (up: boolean): CheckState => (up ? 'ok' : 'unreachable');
  return { status: 503, body: { status: 'unavailable', checks: { database: state(database), ...(usageBus === undefined ? {} : { usageBus: state(usageBus) }) }, ...figures } };
}

/** `read`'s value, or `fallback` when it fails or takes longer than `ms` (it is left to finish). */
export async function valueWithin<T, F>(ms: number, read: () => Promise<T>, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([read().catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}
