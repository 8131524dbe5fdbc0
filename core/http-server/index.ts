export { serveHttp, stopOnSignal, type HttpService } from './serve-http.js';
