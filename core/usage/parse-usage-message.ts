import { occurredAtRefusal } from './occurred-at-bounds.js';
import { usageEventSchema, type UsageEvent } from './usage-event.js';

/** Not billable: why, and (an event a little ahead of the worker's clock) when it will be. */
export type ParsedUsageMessage = { ok: true; event: UsageEvent } | { ok: false; reason: string; replayAfter?: Date };

export function messageText(value: Buffer | string | object | null): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return JSON.stringify(value);
}

/**
 * The consumer's one parser: bytes or jsonb in, a usage event or a reason out. Never throws:
 * a message that cannot be billed is a dead letter, not an error that stalls the partition.
 * With `now` (the worker's clock), an event whose time cannot be charged then is refused too
 * (occurred-at-bounds.ts); without it, only the shape is checked.
 */
export function parseUsageMessage(value: Buffer | string | object | null, now?: Date): ParsedUsageMessage {
  if (value === null) return { ok: false, reason: 'empty message (tombstone)' };
  let data: unknown = value;
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    try {
      data = JSON.parse(messageText(value));
    } catch {
      return { ok: false, reason: 'not JSON' };
    }
  }
  const parsed = usageEventSchema.safeParse(data);
  if (parsed.success) {
    const refusal = now === undefined ? null : occurredAtRefusal(parsed.data.occurredAt, now);
    if (refusal === null) return { ok: true, event: parsed.data };
    return { ok: false, reason: refusal.reason, replayAfter: refusal.replayAfter ?? undefined };
  }
  const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  return { ok: false, reason: `invalid usage event: ${issues.join('; ')}` };
}
