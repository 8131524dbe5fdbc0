import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../core/db/index.js';
import { inferHolderKind, LEGAL_FORM_SUFFIXES } from '../core/companies/infer-holder-kind.js';
import * as holderKind from '../migrations/20261126_026_holder_kind.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

// Migration 026 classified the holders stored before the import wrote a kind, with SQL copies of
// the import's rule (core/companies/infer-holder-kind.ts). The two must agree: a holder stored
// then and the same holder imported now get one kind.

type Holder = { relation: 'shareholder' | 'beneficial_owner' | 'subsidiary'; name: string | null; fiscalCode: string | null };

const names = [
  ...LEGAL_FORM_SUFFIXES.flatMap((form) => [`Esempio ${form}`, `ESEMPIO ${form.toUpperCase()}`, `Esempio ${form.replace(/\./g, '')}`, `Esempio ${form} in liquidazione`]),
  'Müller Beteiligungs GmbH', 'Hudson Ridge Holdings Inc.', 'Van der Berg Holding B.V.', 'García Inversiones S.L.', 'Lefèvre Groupe SA',
  'Rossi, S.r.l.', 'Rossi S. r. l.', 'S.r.l.', 'Schmidt GmbH & Co. KG',
  'Laura Bianchi', 'ROSSI MARIO', 'Anna Sassi', 'Agostino Spadoni', 'Gaia Agnelli', 'Sergio Corporale', 'Giovanni Ltdi', 'Rossi Holding',
  'Maria de Sa Pereira', 'Luca Abbate', 'Esempio S.r.l. e figli', 'Esempio Srl2', '',
];
const codes = [null, '03551940288', 'BNCLRA80A41F205X', 'BNCLRA80A41F20RX', 'DEHRB12345678901'];
const cases: Holder[] = [
  ...names.map((name): Holder => ({ relation: 'shareholder', name, fiscalCode: null })),
  ...codes.flatMap((fiscalCode) => ['Laura Bianchi', 'Bianchi S.r.l.', null].map((name): Holder => ({ relation: 'beneficial_owner', name, fiscalCode }))),
];
const importKind = (h: Holder) => (h.relation === 'subsidiary' ? 'company' : inferHolderKind(h));

describe('migration 026 (holder kind)', () => {
  let scratch: ScratchDatabase;
  let db: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase('holder_kind');
    db = createDb({ connectionString: scratch.url, poolMax: 2 });
    await migrateLatest(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  it('when the backfill\'s SQL classifies a list of holders then it agrees with the import\'s rule on every one', async () => {
    const { rows } = await db.raw<{ rows: { kind: string }[] }>(
      `SELECT ${holderKind.HOLDER_KIND_SQL} AS kind FROM json_to_recordset(?::json) AS h(i int, relation text, name text, related_fiscal_code text) ORDER BY i`,
      [holderKind.PERSONAL_FISCAL_CODE, holderKind.LEGAL_FORM_SUFFIX, JSON.stringify(cases.map((h, i) => ({ i, relation: h.relation, name: h.name, related_fiscal_code: h.fiscalCode })))],
    );
    expect(rows).toHaveLength(cases.length);
    const disagreements = cases.map((h, i) => ({ ...h, sql: rows[i]!.kind, ts: importKind(h) })).filter((c) => c.sql !== c.ts);
    expect(disagreements).toEqual([]);
    // Both kinds occur, so agreement is not that of two constant answers.
    expect(new Set(rows.map((r) => r.kind))).toEqual(new Set(['person', 'company']));
  });

  it('when holders were stored before the column then up classifies each, and down removes the column again', async () => {
    await holderKind.down(db);
    const [{ id }] = await db('companies').insert({ fiscal_code: '00000000026', legal_name: 'Backfill S.r.l.' }).returning('id');
    const [{ id: linked }] = await db('companies').insert({ fiscal_code: '00000000034', legal_name: 'Linked S.p.A.' }).returning('id');
    const stored = [
      { relation: 'shareholder', name: 'Müller Beteiligungs GmbH', related_fiscal_code: null, related_company_id: null },
      { relation: 'shareholder', name: 'Nordsee Partner', related_fiscal_code: 'DEHRB12345678901', related_company_id: null },
      { relation: 'shareholder', name: 'Linked S.p.A.', related_fiscal_code: '00000000034', related_company_id: linked },
      { relation: 'shareholder', name: 'Laura Bianchi', related_fiscal_code: 'BNCLRA80A41F205X', related_company_id: null },
      { relation: 'shareholder', name: 'Marco Ferri', related_fiscal_code: null, related_company_id: null },
      { relation: 'shareholder', name: null, related_fiscal_code: null, related_company_id: null },
      { relation: 'beneficial_owner', name: 'Hudson Ridge Holdings Inc.', related_fiscal_code: null, related_company_id: null },
      { relation: 'beneficial_owner', name: 'Laura Bianchi', related_fiscal_code: null, related_company_id: null },
      { relation: 'subsidiary', name: 'Mario Rossi', related_fiscal_code: null, related_company_id: null },
    ];
    await db('company_holders').insert(stored.map((h, position) => ({ company_id: id, position, share: 0.1, ...h })));

    await holderKind.up(db);
    const kinds = await db('company_holders').where({ company_id: id }).orderBy('position').pluck('holder_kind');
    expect(kinds).toEqual(['company', 'company', 'company', 'person', 'person', 'person', 'company', 'person', 'company']);
    // What the import stores from now on: a kind for each holder, from the closed list.
    await expect(db('company_holders').insert({ company_id: id, relation: 'shareholder', position: 99, name: 'X' })).rejects.toMatchObject({ code: '23502' });
    await expect(db('company_holders').insert({ company_id: id, relation: 'shareholder', position: 99, name: 'X', holder_kind: 'trust' })).rejects.toMatchObject({ code: '23514' });

    await holderKind.down(db);
    expect(await db('company_holders').columnInfo()).not.toHaveProperty('holder_kind');
    await holderKind.up(db);
    expect(await db('company_holders').columnInfo()).toHaveProperty('holder_kind');
  });
});
