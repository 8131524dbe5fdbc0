export { createStartedParts, type StartedParts } from './started-parts.js';
export { startOrExit } from './start-or-exit.js';
