import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Signature';
export const TIMESTAMP_HEADER = 'X-Webhook-Timestamp';
export const DELIVERY_ID_HEADER = 'X-Webhook-Id';

/** `sha256=` + hex HMAC-SHA256 of the exact body bytes with the organization's secret. */
export function signWebhookBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * What a receiver does (docs/dashboard.md shows the same in a few lines): recompute, compare in
 * constant time, and refuse old timestamps. The body carries `sentAt` too, so the signed bytes
 * pin the timestamp and a captured request cannot be replayed later with a fresh header.
 */
export function verifyWebhookSignature(input: { secret: string; body: string; signature: string | undefined; timestamp: string | undefined; toleranceSeconds?: number; now?: Date }): boolean {
  if (!input.signature || !input.timestamp) return false;
  const expected = Buffer.from(signWebhookBody(input.secret, input.body));
  const actual = Buffer.from(input.signature);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return false;
  const sentAt = Number(input.timestamp);
  const now = (input.now ?? new Date()).getTime() / 1000;
  if (!Number.isFinite(sentAt) || Math.abs(now - sentAt) > (input.toleranceSeconds ?? 300)) return false;
  try {
    const body = JSON.parse(input.body) as { sentAt?: string };
    return body.sentAt !== undefined && Math.floor(new Date(body.sentAt).getTime() / 1000) === sentAt;
  } catch {
    return false;
  }
}
