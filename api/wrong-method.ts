import { AppError } from '../core/errors/index.js';

/** A GET-only path asked with another method: 405 `unknown_endpoint` with `Allow: GET` (decisions.md). */
export const wrongMethod = () => new AppError('unknown_endpoint', 'This path only answers GET.', { allow: ['GET'] });
