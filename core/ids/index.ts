export { newId, newRequestId, randomBase62, requestIdOf } from './new-id.js';
