import type { Principal } from '../core/access/index.js';

/** What the middleware chain records about one request (Koa's ctx.state). */
export interface ApiState {
  requestId: string;
  /** Set once the bearer key is verified: the access log and usage event read it. */
  principal?: Principal;
  /** The error code sent, for the access log. */
  errorCode?: string;
}
