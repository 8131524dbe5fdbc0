import type { Context } from 'koa';
import type { Session } from '../core/dashboard-auth/index.js';
import type { Formats, Language, Translate } from './i18n/translate.js';

export interface DashboardState {
  /** Minted for every request (middleware/request-log.ts): X-Request-Id and the request log's line. */
  requestId: string;
  lang: Language;
  t: Translate;
  f: Formats;
  /** The signed-in person's session, when the cookie names a live one. */
  session?: Session;
  /** The cookie value (to end this session on sign-out). */
  sessionToken?: string;
  /** Goes in every form: the session's token, or the pre-session cookie's before sign-in. */
  csrfToken: string;
  /** The url-encoded body of a POST, parsed. */
  form: Record<string, string>;
}

export type DashboardContext = Context & { state: DashboardState };
