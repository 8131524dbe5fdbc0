export { tuneHeap } from './tune-heap.js';
export { serveHttp, stopOnSignal, type HttpService } from './serve-http.js';
