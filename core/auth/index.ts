export { API_KEY_SHAPE, generateApiKey, hashApiKey, displayPrefix, isApiKeyShaped, containsApiKey, withoutApiKeys, type KeyKind, type KeyMode } from './api-key-format.js';
export { bearerToken } from './parse-authorization.js';
export { requestAuthorization } from './request-authorization.js';
export { apiKeyState, type ApiKeyRecord } from './api-key-record.js';
export { apiKeysPage, apiKeyStates, type ApiKeyState, type ApiKeysPage } from './api-keys-page.js';
export { createApiKey, listApiKeys, getApiKey, revokeApiKey, createApiKeyInputSchema, type CreateApiKeyInput, type CreatedApiKey } from './manage-api-keys.js';
export { createKeyVerifier, type KeyVerifier, type KeyVerifierOptions } from './key-verifier.js';
export { createLastUsedRecorder, type LastUsedRecorder } from './last-used-recorder.js';
export { endOfDayUtc } from './key-expiry.js';
