export { editDistance } from './edit-distance.js';
