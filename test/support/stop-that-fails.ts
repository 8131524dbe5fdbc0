// A process whose drain fails, stopped as the services are (stopOnSignal): for
// test/service-shutdown.test.ts. It says "ready" on stdout once its handlers are set.
import { stopOnSignal } from '../../core/http-server/index.js';
import { createLogger } from '../../core/logging/index.js';

stopOnSignal(createLogger({ level: 'info', base: { service: 'stop-that-fails' } }), async () => {
  throw new Error('the pool would not close');
});
setInterval(() => {}, 1_000);
process.stdout.write('ready\n');
