export { createStoreBackedCache, StoreBusyError, StoreUnavailableError, type StoreBackedCache, type StoreBackedCacheOptions, type CacheRead } from './store-backed-cache.js';
