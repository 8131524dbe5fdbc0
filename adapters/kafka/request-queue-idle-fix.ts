import { createRequire } from 'node:module';

// kafkajs 2.2.4 (its last release) keeps every broker connection in a 1 ms timer loop for as
// long as it is open: after each answer, RequestQueue.scheduleCheckPendingRequests sets a timer
// for `throttledUntil - Date.now()`, which with no throttle (throttledUntil = -1) is about minus
// the epoch; Node runs it after 1 ms, and the check it runs schedules the next one (kafkajs
// issues #1704 and #1751). Measured on 26 Nov 2026: an idle process with one connected producer
// spent 430 ms of CPU in 10 s (4% of a core) on it, more with a consumer's several connections,
// and Node 24 prints a TimeoutNegativeWarning for it in every process.
//
// The fix is the one proposed upstream (tulios/kafkajs#1768, review): with nothing pending and
// no throttle there is nothing to check, so nothing is scheduled; push() schedules a check as
// soon as a request has to wait, and every answer checks the queue (fulfillRequest). The rest is
// kafkajs's own method, unchanged.

const CHECK_PENDING_REQUESTS_INTERVAL = 10; // kafkajs's own, requestQueue/index.js

interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

let applied = false;

/**
 * Replaces RequestQueue.scheduleCheckPendingRequests in the kafkajs that `createKafka` uses.
 * Idempotent. Throws when kafkajs no longer has that method where 2.2.4 has it: an upgrade must
 * look at this again, not lose it silently.
 */
export function stopIdleRequestQueueLoop(): void {
  if (applied) return;
  const require = createRequire(import.meta.url);
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueLike };
  if (typeof RequestQueue.prototype?.scheduleCheckPendingRequests !== 'function') {
    throw new Error('kafkajs RequestQueue.scheduleCheckPendingRequests not found: see adapters/kafka/request-queue-idle-fix.ts');
  }
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueLike) {
    let scheduleAt = this.throttledUntil - Date.now();
    if (this.throttleCheckTimeoutId) return;
    if (this.pending.length > 0) scheduleAt = scheduleAt > 0 ? scheduleAt : CHECK_PENDING_REQUESTS_INTERVAL;
    else if (scheduleAt <= 0) return;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, scheduleAt);
  };
  applied = true;
}
