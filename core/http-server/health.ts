// The /healthz answer of every HTTP service (API, tool server, dashboard): liveness plus one
// cheap database round trip, bounded so a probe never hangs on a dead pool. No key needed and
// nothing about the data revealed.

const DEADLINE_MS = 1_000;

export interface HealthAnswer {
  status: 200 | 503;
  body: { status: 'ok' } | { status: 'unavailable'; checks: { database: 'unreachable' } };
}

export async function checkHealth(checkDatabase: () => Promise<unknown>, deadlineMs = DEADLINE_MS): Promise<HealthAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), deadlineMs); });
  try {
    const healthy = await Promise.race([checkDatabase().then(() => true, () => false), deadline]);
    return healthy ? { status: 200, body: { status: 'ok' } } : { status: 503, body: { status: 'unavailable', checks: { database: 'unreachable' } } };
  } finally {
    clearTimeout(timer);
  }
}
