import Koa from 'koa';
import { Router } from '@koa/router';
import { passwordCheckSlots, type SignInLimits } from '../core/dashboard-auth/index.js';
import type { Db } from '../core/db/index.js';
import type { Logger } from '../core/logging/index.js';
import { checkHealth, livenessAnswer } from '../core/http-server/index.js';
import { errorPage } from './middleware/error-page.js';
import { formAddressAsPage } from './middleware/form-address-as-page.js';
import { language } from './middleware/language.js';
import { readForm } from './middleware/read-form.js';
import { refuseNul } from './middleware/refuse-nul.js';
import { refusedFormPage } from './middleware/refused-form-page.js';
import { requestLog } from './middleware/request-log.js';
import { securityHeaders } from './middleware/security-headers.js';
import { untrustedProxyHint } from './middleware/untrusted-proxy-hint.js';
import { loadSession, requireCsrf } from './middleware/session.js';
import { registerAccountRoutes } from './routes/account-routes.js';
import { registerAlertsRoutes } from './routes/alerts-routes.js';
import { registerAssetRoutes } from './routes/asset-routes.js';
import { registerAuthRoutes } from './routes/auth-routes.js';
import { registerActivityRoutes } from './routes/activity-routes.js';
import { registerFinanceRoutes } from './routes/finance-routes.js';
import { registerKeysRoutes } from './routes/keys-routes.js';
import { registerMembersRoutes } from './routes/members-routes.js';
import { registerOperatorRoutes } from './routes/operator-routes.js';
import { registerOrgsRoutes } from './routes/orgs-routes.js';
import { registerPasswordResetRoutes } from './routes/password-reset-routes.js';
import type { DashboardState } from './state.js';

export { ensureOperator } from '../core/dashboard-auth/index.js';

export interface DashboardDeps {
  db: Db;
  /** One cheap round trip to the database, for /healthz: the process's OpenDatabase.probe. */
  checkDatabase(): Promise<void>;
  logger: Logger;
  /** Add `Secure` to cookies: true when the dashboard is served over https. */
  secureCookies: boolean;
  /** Trust X-Forwarded-* (behind a TLS-terminating proxy). */
  trustProxy?: boolean;
  /** The API's address, shown next to a new key; its guide is linked from the keys and alerts pages. */
  apiBaseUrl?: string;
  /** The dashboard's own public address (PUBLIC_DASHBOARD_URL), which invitation links start
   * with; without it, the address the request came to. */
  publicUrl?: string;
  /** May an admin save a webhook address that is private at sight (WEBHOOK_ALLOW_PRIVATE_TARGETS)? Default: no. */
  allowPrivateWebhookTargets?: boolean;
  signInLimits?: SignInLimits;
}

// Paths anyone may open; everything else needs a signed-in person.
const PUBLIC = [/^\/sign-in$/, /^\/language$/, /^\/invitations\/[^/]+$/, /^\/password-reset\/[^/]+$/, /^\/assets\//, /^\/healthz$/, /^\/livez$/, /^\/$/];

/** The dashboard as a Koa app, not listening: main.ts, `npm start` and the tests mount it. */
export function createDashboardApp(deps: DashboardDeps): Koa<DashboardState> {
  const app = new Koa<DashboardState>();
  app.proxy = deps.trustProxy ?? false;
  const router = new Router<DashboardState>();

  // As the API's and the tool server's: JSON, 503 within a second when the database is gone.
  router.get('/healthz', async (ctx) => {
    const answer = await checkHealth({ database: deps.checkDatabase });
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
  router.get('/livez', (ctx) => {
    const answer = livenessAnswer();
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
  registerAssetRoutes(router);
  // One set of slots for every password this app checks (sign-in, an accepted invitation, a
  // password change, a reset link used): the app is the process's only dashboard, so it bounds the process's checks.
  const passwordChecks = deps.signInLimits?.passwordChecks ?? passwordCheckSlots();
  registerAuthRoutes(router, { db: deps.db, secureCookies: deps.secureCookies, signInLimits: deps.signInLimits, passwordChecks });
  registerAccountRoutes(router, { db: deps.db, secureCookies: deps.secureCookies, signInLimits: deps.signInLimits, passwordChecks });
  registerPasswordResetRoutes(router, { db: deps.db, secureCookies: deps.secureCookies, signInLimits: deps.signInLimits, passwordChecks });
  registerOrgsRoutes(router, { db: deps.db });
  registerKeysRoutes(router, { db: deps.db, apiBaseUrl: deps.apiBaseUrl });
  registerFinanceRoutes(router, { db: deps.db });
  registerMembersRoutes(router, { db: deps.db, publicUrl: deps.publicUrl });
  registerActivityRoutes(router, { db: deps.db });
  registerAlertsRoutes(router, { db: deps.db, allowPrivateWebhookTargets: deps.allowPrivateWebhookTargets ?? false, apiBaseUrl: deps.apiBaseUrl });
  registerOperatorRoutes(router, { db: deps.db, publicUrl: deps.publicUrl });

  app.use(requestLog(deps.logger));
  app.use(securityHeaders());
  app.use(untrustedProxyHint(deps.logger));
  app.use(language());
  app.use(refusedFormPage());
  app.use(errorPage(deps.logger));
  app.use(readForm());
  app.use(refuseNul());
  app.use(loadSession({ db: deps.db, secureCookies: deps.secureCookies }));
  app.use(requireCsrf());
  app.use(async (ctx, next) => {
    if (!ctx.state.session && !PUBLIC.some((p) => p.test(ctx.path))) {
      if (ctx.method === 'GET') return ctx.redirect(`/sign-in?next=${encodeURIComponent(ctx.originalUrl)}`);
      ctx.throw(403, 'csrf');
    }
    await next();
  });
  app.use(formAddressAsPage(router));
  app.use(router.routes());
  app.silent = true;
  app.on('error', (err) => deps.logger.warn('dashboard response error', { err }));
  return app;
}
