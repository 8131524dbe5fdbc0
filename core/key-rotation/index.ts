export { rotateApiKey, rotationGraceSeconds, type RotatedApiKey } from './rotate-api-key.js';
