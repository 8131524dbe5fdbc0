import type { Db } from '../../db/index.js';
import { AppError, isAppError } from '../../errors/index.js';

// Two organizations with one name are allowed (existing deployments hold some, and an operator
// may mean it), but a second one made by accident (a provisioning script run again after a
// timeout, a form sent twice) gets its own opening grant, keys made on the wrong one, and a name
// `findOrganizationId` can no longer resolve. So the operator surfaces refuse a name another
// organization has unless told otherwise. Names are the same when they differ only in case and
// in runs of whitespace ("acme  srl " is "Acme SRL").

/** A name as the comparison sees it, in SQL, so stored names and the new one go through one rule. */
const normalized = (expression: string) => `lower(btrim(regexp_replace(${expression}, '\\s+', ' ', 'g')))`;

// The first key of the two-key advisory lock on a normalized name ('ORGN'); sign-in's locks
// (core/dashboard-auth/sign-in.ts) have spaces of their own.
const ORGANIZATION_NAME_LOCK_SPACE = 0x4f52474e;

/**
 * Holds the normalized name until the transaction ends: of two creations of one name at once,
 * the second looks for it only after the first has committed (or rolled back), so both cannot
 * find it free. Not a unique index: the duplicates already stored, and those made on purpose,
 * must stay possible.
 */
export async function lockOrganizationName(trx: Db, name: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(?::int, hashtext(${normalized('?::text')}))`, [ORGANIZATION_NAME_LOCK_SPACE, name]);
}

/** The oldest organization whose name is `name` once both are normalized. */
export async function organizationNamed(db: Db, name: string): Promise<{ id: string; name: string } | undefined> {
  return db('organizations')
    .whereRaw(`${normalized('name')} = ${normalized('?::text')}`, [name])
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .first<{ id: string; name: string } | undefined>('id', 'name');
}

/** createOrganization's refusal of a taken name, under `name`, followed by the owner's id. */
export const NAME_TAKEN = 'already the name of organization';
const nameTakenDetail = new RegExp(`^${NAME_TAKEN} (?<organizationId>org_[0-9A-Za-z]+)$`);

export function refuseTakenName(existing: { id: string; name: string }): never {
  // Each surface adds how to create it anyway (a CLI option, a form's checkbox).
  throw new AppError('invalid_params', `An organization named "${existing.name}" already exists (${existing.id}).`, {
    details: [{ path: 'name', message: `${NAME_TAKEN} ${existing.id}` }],
  });
}

/** The id of the organization whose name made createOrganization refuse, if that is the refusal. */
export function nameTakenBy(err: unknown): string | undefined {
  if (!isAppError(err) || err.code !== 'invalid_params') return undefined;
  for (const detail of err.details ?? []) {
    const match = detail.path === 'name' ? nameTakenDetail.exec(detail.message) : null;
    if (match) return match.groups!.organizationId;
  }
  return undefined;
}
