import { z } from 'zod';
import type { Db } from '../db/index.js';
import { parseInput } from '../errors/index.js';
import { newId, randomBase62 } from '../ids/index.js';
import { hashPassword, verifyPassword } from './password-hash.js';

export interface OperatorSignIn {
  email: string;
  /** Only when the operator was created just now: it is never stored in clear. */
  password?: string;
}

const operatorEmail = z.string().trim().toLowerCase().pipe(z.email());

/**
 * The first operator, so a fresh installation can be signed into. Does nothing when any
 * operator exists (returns that one's e-mail); otherwise creates `email` as an operator with
 * a random password and returns it, once. `npm start` prints it and writes it to demo.json.
 */
export async function ensureOperator(db: Db, input: { email: string }): Promise<OperatorSignIn> {
  const email = parseInput(operatorEmail, input.email);
  const existing = await db('users').where({ is_operator: true }).whereNull('disabled_at').orderBy('created_at').first<{ email: string } | undefined>('email');
  if (existing) return { email: existing.email };
  const password = randomBase62(20);
  const passwordHash = await hashPassword(password);
  await saveOperator(db, email, passwordHash);
  return { email, password };
}

/**
 * Whether `password` still signs in as the operator `email`: a password shown once and kept
 * (`npm start` keeps the first one in demo.json) is not shown again once it was changed.
 */
export async function operatorPasswordWorks(db: Db, email: string, password: string): Promise<boolean> {
  const row = await db('users').whereRaw('lower(email) = ?', [email.trim().toLowerCase()]).where({ is_operator: true }).whereNull('disabled_at')
    .first<{ password_hash: string | null } | undefined>('password_hash');
  return row?.password_hash ? verifyPassword(password, row.password_hash) : false;
}

/** Creates or promotes an operator with a known password (tests, the CLI). */
export async function upsertOperator(db: Db, input: { email: string; password: string }): Promise<string> {
  const email = parseInput(operatorEmail, input.email);
  return saveOperator(db, email, await hashPassword(input.password));
}

// A person who already has that e-mail (say an invited admin) becomes the operator.
async function saveOperator(db: Db, email: string, passwordHash: string): Promise<string> {
  const { rows } = await db.raw<{ rows: { id: string }[] }>(
    `INSERT INTO users (id, email, password_hash, is_operator) VALUES (?, ?, ?, true)
     ON CONFLICT ((lower(email))) DO UPDATE SET password_hash = EXCLUDED.password_hash, is_operator = true
     RETURNING id`,
    [newId('usr'), email, passwordHash],
  );
  return rows[0]!.id;
}
