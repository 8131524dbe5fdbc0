import { countedKeysetPage, countRows, createdAtKeyset, type CreatedAtPosition, type Db, type RowPosition } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { postWebhook } from './post-webhook.js';
import { DELIVERY_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signWebhookBody } from './webhook-signature.js';

export interface DeliveryOptions {
  /** May webhooks go to private, loopback or link-local addresses (post-webhook.ts)? Default: no. */
  allowPrivateTargets?: boolean;
  now?: () => Date;
  timeoutMs?: number;
  /** After this many failed attempts the delivery is marked failed. */
  maxAttempts?: number;
  /** First retry after this long, doubling each time, capped at `maxBackoffMs`. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  batchSize?: number;
  logger?: Logger;
}

export const defaultDeliveryOptions = { timeoutMs: 5_000, maxAttempts: 8, baseBackoffMs: 10_000, maxBackoffMs: 3_600_000, batchSize: 20, allowPrivateTargets: false };

/** 10 s, 20 s, 40 s … capped: the wait before attempt `attempt + 1`. */
export function backoffMs(attempt: number, base: number, max: number): number {
  return Math.min(max, base * 2 ** Math.max(0, attempt - 1));
}

// While one process sends, the row is leased: next_attempt_at moves past the timeout, so a
// second dashboard process does not send the same delivery at the same time.
const LEASE_MARGIN_MS = 5_000;

export interface DeliveryRunOutcome {
  delivered: number;
  retrying: number;
  failed: number;
}

interface ClaimedDelivery {
  id: string;
  organization_id: string;
  payload: Record<string, unknown>;
  attempts: number;
  webhook_url: string | null;
  webhook_secret: string | null;
}

export async function deliverDueWebhooks(db: Db, options: DeliveryOptions = {}): Promise<DeliveryRunOutcome> {
  const o = { ...defaultDeliveryOptions, ...options };
  const now = options.now ?? (() => new Date());
  const claimedAt = now();
  const { rows: claimed } = await db.raw<{ rows: Omit<ClaimedDelivery, 'webhook_url' | 'webhook_secret'>[] }>(
    `UPDATE webhook_deliveries SET next_attempt_at = ?
      WHERE id IN (SELECT id FROM webhook_deliveries
                    WHERE status = 'pending' AND next_attempt_at <= ?
                    ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED)
     RETURNING id, organization_id, payload, attempts`,
    [new Date(claimedAt.getTime() + o.timeoutMs + LEASE_MARGIN_MS), claimedAt, o.batchSize],
  );
  const settings = claimed.length === 0 ? [] : await db('alert_settings').whereIn('organization_id', [...new Set(claimed.map((d) => d.organization_id))])
    .select<{ organization_id: string; webhook_url: string | null; webhook_secret: string }[]>('organization_id', 'webhook_url', 'webhook_secret');
  const rows: ClaimedDelivery[] = claimed.map((d) => {
    const s = settings.find((x) => x.organization_id === d.organization_id);
    return { ...d, webhook_url: s?.webhook_url ?? null, webhook_secret: s?.webhook_secret ?? null };
  });
  const outcome: DeliveryRunOutcome = { delivered: 0, retrying: 0, failed: 0 };
  await Promise.all(
    rows.map(async (d) => {
      const attempt = d.attempts + 1;
      let statusCode: number | null = null;
      let error: string | null = null;
      if (!d.webhook_url || !d.webhook_secret) {
        error = 'no webhook address configured';
      } else {
        const sentAt = now();
        // The body carries sentAt, so the signature covers the timestamp (replays are refused).
        const body = JSON.stringify({ ...d.payload, sentAt: new Date(Math.floor(sentAt.getTime() / 1000) * 1000).toISOString(), attempt });
        try {
          statusCode = await postWebhook({
            url: d.webhook_url,
            headers: {
              'content-type': 'application/json',
              'user-agent': 'italian-company-data-webhooks/1',
              [SIGNATURE_HEADER]: signWebhookBody(d.webhook_secret, body),
              [TIMESTAMP_HEADER]: String(Math.floor(sentAt.getTime() / 1000)),
              [DELIVERY_ID_HEADER]: d.id,
            },
            body,
            timeoutMs: o.timeoutMs,
            allowPrivateTargets: o.allowPrivateTargets,
          });
          if (statusCode < 200 || statusCode >= 300) error = `HTTP ${statusCode}`;
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
        }
      }
      const finished = now();
      if (error === null) {
        outcome.delivered += 1;
        await db('webhook_deliveries').where({ id: d.id }).update({ status: 'delivered', attempts: attempt, last_status_code: statusCode, last_error: null, delivered_at: finished, next_attempt_at: null });
        return;
      }
      const giveUp = attempt >= o.maxAttempts;
      if (giveUp) outcome.failed += 1;
      else outcome.retrying += 1;
      options.logger?.warn('webhook delivery failed', { deliveryId: d.id, organizationId: d.organization_id, attempt, error, giveUp });
      await db('webhook_deliveries').where({ id: d.id }).update({
        status: giveUp ? 'failed' : 'pending',
        attempts: attempt,
        last_status_code: statusCode,
        last_error: error.slice(0, 500),
        next_attempt_at: giveUp ? null : new Date(finished.getTime() + backoffMs(attempt, o.baseBackoffMs, o.maxBackoffMs)),
      });
    }),
  );
  return outcome;
}

export interface WebhookDeliveryRow {
  id: string;
  eventType: string;
  thresholdId: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  nextAttemptAt: Date | null;
  payload: Record<string, unknown>;
}

/** An organization's newest deliveries first (the id after the time: deliveries made in the same
 * instant keep one order, so pages neither repeat nor skip one). */
const deliveriesInOrder = (db: Db, organizationId: string) =>
  db('webhook_deliveries').where({ organization_id: organizationId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]);

export async function listDeliveries(db: Db, organizationId: string, limit = 50): Promise<WebhookDeliveryRow[]> {
  return (await deliveriesInOrder(db, organizationId).limit(limit).select('*')).map(deliveryFromRow);
}

/** The deliveries past one (null: from the newest, or the oldest), nearest first: `older`
 * newest first, `newer` oldest first; the same order as `deliveriesInOrder`. */
function deliveriesBeyond(db: Db, organizationId: string, from: CreatedAtPosition | null, direction: 'older' | 'newer') {
  return createdAtKeyset(db, 'whd').beyond(db('webhook_deliveries').where({ organization_id: organizationId }).select('*'), from, direction);
}

export interface DeliveriesPage {
  rows: WebhookDeliveryRow[];
  /** Where the page falls among the deliveries now: the pages of newer and older ones around it. */
  page: number;
  pages: number;
  total: number;
  /** Cursors of the pages beside this one (null: no deliveries that way). */
  older: string | null;
  newer: string | null;
}

/**
 * One page of the delivery log, newest first, and how many deliveries there are in all (the
 * alerts page's pager). The first page (or one asked for by number) is read by offset; the pages
 * beside it from a row (`keysetRows`, as the ledger's are): a delivery made while a reader moves
 * from page to page does not push the last row of one page onto the next. Counted to the end: a
 * delivery is a threshold crossing or a test, a few a month, not one per call as the ledger's
 * rows are; so a page reached from a row is numbered too, by the deliveries newer than it.
 */
export async function deliveriesPage(db: Db, organizationId: string, options: { pageSize?: number } & RowPosition = {}): Promise<DeliveriesPage> {
  const pageSize = options.pageSize ?? 50;
  const total = await countRows(db('webhook_deliveries').where({ organization_id: organizationId }));
  const { cursorOf, parseCursor } = createdAtKeyset(db, 'whd');
  const read = await countedKeysetPage({ cursorOf, parseCursor, beyond: (from, direction) => deliveriesBeyond(db, organizationId, from, direction) }, options, total, pageSize);
  return { rows: read.rows.map(deliveryFromRow), page: read.page, pages: read.pages, total, older: read.older, newer: read.newer };
}

function deliveryFromRow(r: Record<string, any>): WebhookDeliveryRow {
  return {
    id: r.id,
    eventType: r.event_type,
    thresholdId: r.threshold_id,
    status: r.status,
    attempts: r.attempts,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
    nextAttemptAt: r.next_attempt_at,
    payload: r.payload,
  };
}
