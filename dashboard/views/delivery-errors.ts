import type { DashboardState } from '../state.js';

// Why a webhook delivery failed, as core/alerts writes it in English (deliver-webhooks.ts,
// post-webhook.ts), said in the page's language. An error from the network itself
// ('connect ECONNREFUSED …') is technical and shows as it came.
const sayings: [RegExp, (state: Pick<DashboardState, 't' | 'f'>, g: Record<string, string>) => string][] = [
  [/^no webhook address configured$/, (s) => s.t('alerts.deliveryError.noWebhook')],
  [/^refused: (?<host>\S+) is (?<address>\S+), a private address \(see WEBHOOK_ALLOW_PRIVATE_TARGETS\)$/, (s, g) => s.t('alerts.deliveryError.private', { host: g.host!, address: g.address! })],
  [/^no answer within (?<ms>\d+) ms$/, (s, g) => s.t('alerts.deliveryError.timeout', { ms: s.f.number(Number(g.ms)) })],
];

export function deliveryError(state: Pick<DashboardState, 't' | 'f'>, error: string): string {
  for (const [pattern, say] of sayings) {
    const match = pattern.exec(error);
    if (match) return say(state, match.groups ?? {});
  }
  return error;
}
