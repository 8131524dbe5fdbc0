export { newId, newRequestId, randomBase62 } from './new-id.js';
