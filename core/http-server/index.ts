export { limitHeapGrowth } from './limit-heap-growth.js';
export { serveHttp, stopOnSignal, type HttpService } from './serve-http.js';
