export { tuneHeap } from './tune-heap.js';
export { REQUEST_TIMEOUT_MS, serveHttp, stopOnSignal, type HttpService, type ServeHttpOptions } from './serve-http.js';
export { serveOnPort, type PortVariable, type ServeOnPortOptions } from './serve-on-port.js';
export { checkHealth, valueWithin, type HealthAnswer, type HealthChecks } from './health.js';
export { accessLog } from './access-log.js';
export { closeAfterAnswer } from './close-after-answer.js';
export { livenessAnswer, markStopping, PROBE_PATHS, type LivenessAnswer } from './liveness.js';
export { callerGone, CLIENT_CLOSED_REQUEST } from './caller-gone.js';
