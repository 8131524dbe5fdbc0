export { withinDeadline } from './within-deadline.js';
