export { createStartedParts, type StartedParts } from './started-parts.js';
export { startOrExit } from './start-or-exit.js';
export { STOP_STEP_MS, stopWithin } from './stop-within.js';
