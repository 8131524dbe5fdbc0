export { askForCap, askForCredits, capReachedReason, errorCatalogue, errorCodes, statusOf, type ErrorCode } from './catalogue.js';
export { AppError, isAppError, type ErrorDetail, type AppErrorOptions } from './app-error.js';
export { errorEnvelopeSchema, errorObjectSchema, requestIdSchema, toErrorObject, type ErrorObject } from './error-envelope.js';
export { issueDetails, parseInput } from './parse-input.js';
export { isSizeRefusal, MAX_WHOLE_NUMBER, NO_PLUS_SIGN, WHOLE_NUMBER, wholeNumberRefusal } from './whole-number.js';
export { networkReason } from './network-reason.js';
export { errorMessage } from './error-message.js';
export { causeChain } from './cause-chain.js';
