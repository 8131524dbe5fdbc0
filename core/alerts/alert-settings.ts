import { z } from 'zod';
import type { Db } from '../db/index.js';
import { AppError, isSizeRefusal, wholeNumberRefusal } from '../errors/index.js';
import { newId, randomBase62 } from '../ids/index.js';
import { isPrivateAtSight } from './post-webhook.js';

export interface AlertSettings {
  organizationId: string;
  webhookUrl: string | null;
  /** Shared with the receiver to check X-Signature. */
  webhookSecret: string;
}

export const thresholdKinds = ['percent_used', 'balance_below'] as const;
export type ThresholdKind = (typeof thresholdKinds)[number];

export interface AlertThreshold {
  id: string;
  organizationId: string;
  kind: ThresholdKind;
  value: number;
  firedPeriod: string | null;
  firedAt: Date | null;
}

const newWebhookSecret = () => `whsec_${randomBase62(32)}`;

// Only http(s); the receiver is the customer's own server. Whether it may be a private address
// is decided when sending, where the address is resolved (post-webhook.ts).
const MAX_WEBHOOK_URL = 2_000;
export const webhookUrlSchema = z.url({ protocol: /^https?$/ }).max(MAX_WEBHOOK_URL);

/** The organization's settings, made (with a fresh secret) on first read. */
export async function alertSettings(db: Db, organizationId: string): Promise<AlertSettings> {
  await db('alert_settings').insert({ organization_id: organizationId, webhook_url: null, webhook_secret: newWebhookSecret() }).onConflict('organization_id').ignore();
  const row = await db('alert_settings').where({ organization_id: organizationId }).first<{ webhook_url: string | null; webhook_secret: string }>('webhook_url', 'webhook_secret');
  return { organizationId, webhookUrl: row.webhook_url, webhookSecret: row.webhook_secret };
}

/** The refusal of an address that is private at sight where private targets are not allowed. */
export const PRIVATE_WEBHOOK_TARGET = 'a private address';

/**
 * Saves the webhook address. Where private targets are not allowed (production), one that is
 * private at sight (`http://10.0.0.5/…`, `localhost`) is refused here, so the admin learns it
 * now rather than from the delivery log; a name is judged when sending (post-webhook.ts).
 */
export async function setWebhookUrl(db: Db, organizationId: string, url: string | null, options: { allowPrivateTargets?: boolean } = {}): Promise<AlertSettings & { changed: boolean }> {
  const parsed = url === null || url.trim() === '' ? null : webhookUrlSchema.safeParse(url.trim());
  if (parsed && !parsed.success && url!.trim().length > MAX_WEBHOOK_URL) {
    throw new AppError('invalid_params', `The webhook address must be at most ${MAX_WEBHOOK_URL} characters.`, { details: [{ path: 'webhookUrl', message: `at most ${MAX_WEBHOOK_URL} characters` }] });
  }
  if (parsed && !parsed.success) throw new AppError('invalid_params', 'The webhook address must be an http(s) URL.', { details: [{ path: 'webhookUrl', message: 'an http(s) URL' }] });
  if (parsed && !options.allowPrivateTargets && isPrivateAtSight(parsed.data)) {
    throw new AppError('invalid_params', 'The webhook address is a private one, which this service does not send to.', { details: [{ path: 'webhookUrl', message: PRIVATE_WEBHOOK_TARGET }] });
  }
  await alertSettings(db, organizationId);
  const webhookUrl = parsed ? parsed.data : null;
  // Locked (in a caller's transaction) so that of two saves at once the second sees the first's
  // address: the same address saved again (a double-click) is no change, and is not logged.
  const before = await db('alert_settings').where({ organization_id: organizationId }).forUpdate().first<{ webhook_url: string | null }>('webhook_url');
  if (before.webhook_url === webhookUrl) return { ...(await alertSettings(db, organizationId)), changed: false };
  await db('alert_settings').where({ organization_id: organizationId }).update({ webhook_url: webhookUrl, updated_at: db.fn.now() });
  return { ...(await alertSettings(db, organizationId)), changed: true };
}

export async function rotateWebhookSecret(db: Db, organizationId: string): Promise<AlertSettings> {
  await alertSettings(db, organizationId);
  await db('alert_settings').where({ organization_id: organizationId }).update({ webhook_secret: newWebhookSecret(), updated_at: db.fn.now() });
  return alertSettings(db, organizationId);
}

// A form sends text: only digits make a whole number (coercion would read '' and ' ' as 0 and
// '0x10' as 16, and save a threshold nobody typed).
const wholeNumber = z.union([z.number(), z.string().trim().regex(/^\d+$/).transform(Number)]).pipe(z.number().int());

export const thresholdInputSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('percent_used'), value: wholeNumber.pipe(z.number().min(1).max(100)) }),
  z.object({ kind: z.literal('balance_below'), value: wholeNumber.pipe(z.number().min(0).max(Number.MAX_SAFE_INTEGER)) }),
]);

/** Why a threshold was refused: the form shows a sentence for each. */
export const THRESHOLD_ALREADY_SET = 'already set';

export async function addThreshold(db: Db, organizationId: string, input: z.input<typeof thresholdInputSchema>): Promise<AlertThreshold> {
  const parsed = thresholdInputSchema.safeParse(input);
  if (!parsed.success) {
    // "7,5" or "2.500" is not out of range but not a number as typed: said so, as the operator
    // forms say it, and not as a range the person would read as 7.5 or 2500 being too big.
    // A blank field is no number at all: the range says what to type.
    const typed = typeof input.value === 'string' ? input.value.trim() : '';
    const refusal = typed === '' ? null : wholeNumberRefusal(typed);
    // 40 ones are digits: a balance that large is refused by its bound, a percentage by its range.
    if (isSizeRefusal(refusal) && input.kind === 'balance_below') throw new AppError('invalid_params', `A threshold balance is ${refusal} credits.`, { details: [{ path: 'value', message: refusal }] });
    const notDigits = isSizeRefusal(refusal) ? null : refusal;
    if (notDigits !== null) throw new AppError('invalid_params', `A threshold is ${notDigits}, in digits only (no separators).`, { details: [{ path: 'value', message: notDigits }] });
    throw new AppError('invalid_params', 'A threshold is a percentage from 1 to 100, or a balance of 0 or more credits.', { details: [{ path: 'value', message: 'out of range' }] });
  }
  const [row] = await db('alert_thresholds')
    .insert({ id: newId('thr'), organization_id: organizationId, kind: parsed.data.kind, value: parsed.data.value })
    .onConflict(['organization_id', 'kind', 'value'])
    .ignore()
    .returning('*');
  if (!row) throw new AppError('invalid_params', 'This threshold is already set.', { details: [{ path: 'value', message: THRESHOLD_ALREADY_SET }] });
  return toThreshold(row);
}

export async function removeThreshold(db: Db, organizationId: string, thresholdId: string): Promise<boolean> {
  return (await db('alert_thresholds').where({ id: thresholdId, organization_id: organizationId }).delete()) > 0;
}

export async function listThresholds(db: Db, organizationId: string): Promise<AlertThreshold[]> {
  const rows = await db('alert_thresholds').where({ organization_id: organizationId }).orderBy([{ column: 'kind' }, { column: 'value' }]).select('*');
  return rows.map(toThreshold);
}

function toThreshold(row: Record<string, any>): AlertThreshold {
  return { id: row.id, organizationId: row.organization_id, kind: row.kind, value: row.value, firedPeriod: row.fired_period, firedAt: row.fired_at };
}
