// /livez, beside each service's /healthz. /healthz is readiness: it answers 503 while the
// database (or Kafka) is away, and a liveness probe pointed at it would restart every replica
// of a service during a dependency's outage, which restarting cannot fix. /livez checks nothing
// outside the process: an answer at all means its event loop turns; 503 once it has begun to
// stop (a signal's drain), so an orchestrator does not count a draining process as a new failure
// nor send it more work. No key, no rate limit, no billing, no request-log line unless it fails.

let stoppingSince: Date | null = null;

/** Called when the process begins to stop (stopOnSignal, the billing worker's signal handler). */
export function markStopping(): void {
  stoppingSince ??= new Date();
}

export interface LivenessAnswer {
  status: 200 | 503;
  body: { status: 'ok' } | { status: 'stopping'; since: string };
}

export function livenessAnswer(): LivenessAnswer {
  return stoppingSince ? { status: 503, body: { status: 'stopping', since: stoppingSince.toISOString() } } : { status: 200, body: { status: 'ok' } };
}

/** The probe paths: their request-log lines are written at debug unless the answer is an error. */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez']);
