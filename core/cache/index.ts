export { createStoreBackedCache, StoreUnavailableError, type StoreBackedCache, type StoreBackedCacheOptions, type CacheRead } from './store-backed-cache.js';
