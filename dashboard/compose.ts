import type Koa from 'koa';
import { startAlertRunner, type AlertRunner, type DeliveryOptions } from '../core/alerts/index.js';
import { ensureDefaultPlans } from '../core/billing/index.js';
import type { Config } from '../core/config/index.js';
import { defaultSignInLimits, startSignInPruner, type SignInPruner } from '../core/dashboard-auth/index.js';
import type { OpenDatabase } from '../core/db/index.js';
import type { Logger } from '../core/logging/index.js';
import { localUrl } from '../core/net/local-url.js';
import { createDashboardApp } from './app.js';
import type { DashboardState } from './state.js';

export interface ComposeDashboardOptions {
  config: Config;
  logger: Logger;
  /** Opened (and later closed) by the caller. */
  database: OpenDatabase;
  /** How often thresholds are evaluated and due webhooks sent. */
  alertIntervalMs?: number;
  delivery?: DeliveryOptions;
  /** How often sign-in rows nothing reads any more are deleted (default hourly; also at start). */
  pruneIntervalMs?: number;
}

export interface ComposedDashboard {
  app: Koa<DashboardState>;
  alerts: AlertRunner;
  pruner: SignInPruner;
  /** Stops the alert runner and the pruner (not the database). */
  close(): Promise<void>;
}

/** The dashboard wired from config: used by dashboard/main.ts and by the all-in-one `npm start`. */
export async function composeDashboard(options: ComposeDashboardOptions): Promise<ComposedDashboard> {
  const { config, logger, database } = options;
  const publicUrl = config.PUBLIC_DASHBOARD_URL ?? `http://${config.HOST}:${config.DASHBOARD_PORT}`;
  const allowPrivateWebhookTargets = config.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? config.NODE_ENV !== 'production';
  // Said once at start: an http address in production sends the 12-hour session cookie without
  // Secure, so a TLS proxy in front does not keep it off plain http (docker-compose.yml's
  // localhost address is the one place this is meant).
  const localhost = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?(\/|$)/.test(publicUrl);
  if (config.NODE_ENV === 'production' && !publicUrl.startsWith('https:') && !localhost) {
    logger.warn('PUBLIC_DASHBOARD_URL is not https: the session and trusted-browser cookies are sent without Secure; behind TLS, set PUBLIC_DASHBOARD_URL to the https address people use', { publicUrl });
  }
  await ensureDefaultPlans(database.db);
  // One value for the sign-in and the pruner: the pruner keeps what these limits' lock reads.
  const signInLimits = defaultSignInLimits;
  const app = createDashboardApp({
    db: database.db,
    checkDatabase: database.probe,
    logger,
    secureCookies: publicUrl.startsWith('https:'),
    trustProxy: config.TRUST_PROXY,
    // The keys page's Try it command: an address to open (127.0.0.1 for HOST 0.0.0.0).
    apiBaseUrl: config.PUBLIC_BASE_URL ?? localUrl(config.HOST, config.API_PORT),
    // Unset, the request's own host makes a better link than HOST:PORT (which may be 0.0.0.0).
    publicUrl: config.PUBLIC_DASHBOARD_URL,
    allowPrivateWebhookTargets,
    signInLimits,
  });
  const delivery: DeliveryOptions = { allowPrivateTargets: allowPrivateWebhookTargets, ...options.delivery };
  const alerts = startAlertRunner({ db: database.db, logger: logger.child({ component: 'alerts' }), intervalMs: options.alertIntervalMs ?? 5_000, delivery });
  const pruner = startSignInPruner({ db: database.db, logger: logger.child({ component: 'sign-in-pruner' }), intervalMs: options.pruneIntervalMs ?? 60 * 60 * 1000, limits: signInLimits });
  return {
    app,
    alerts,
    pruner,
    close: async () => {
      await Promise.all([alerts.stop(), pruner.stop()]);
    },
  };
}
