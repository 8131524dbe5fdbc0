import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBase62 } from '../ids/index.js';
import { createLogger } from '../logging/index.js';
import { testDb } from '../../test/support/database.js';
import { dossier, fiscalCodes } from '../../test/support/company-dossiers.js';
import { searchPeople } from './search-people.js';
import { upsertCompanies } from './write-companies.js';

const db = testDb();
const deps = { db, queryTimeoutMs: 5_000, logger: createLogger({ level: 'silent' }) };
const token = `Zv${randomBase62(6).replace(/[^A-Za-z]/g, 'q')}`;
const next = fiscalCodes();
const [a, b, parent] = [next(), next(), next()];

beforeAll(async () => {
  await upsertCompanies(db, [
    dossier(parent, { legalName: `${token} Parent SPA` }),
    dossier(a, {
      officers: [{ name: `Laura ${token} Conti`, role: 'Presidente', roleCategory: 'board_member' }],
      shareholders: [{ name: `${token} Parent SPA`, share: 0.5, fiscalCode: parent }, { name: `LAURA  ${token} CONTI`, share: 0.5 }],
    }),
    dossier(b, { officers: [{ name: `Laura ${token} Conti`, role: 'Sindaco', roleCategory: 'statutory_auditor' }] }),
  ]);
});
afterAll(() => db.destroy());

describe('searchPeople', () => {
  it('when one name holds several roles then they come back under one person, spelling and spacing differences merged', async () => {
    const result = await searchPeople(deps, { name: `conti laura ${token}`, limit: 10 });
    expect(result.people).toHaveLength(1);
    expect(result.people[0]!.roles.map((r) => `${r.kind}:${r.company.fiscalCode}`).sort()).toEqual([`officer:${a}`, `officer:${b}`, `shareholder:${a}`].sort());
  });

  it('when a shareholder is a company then a people search does not list it', async () => {
    const result = await searchPeople(deps, { name: `${token} Parent`, limit: 10 });
    expect(result.people).toEqual([]);
  });

  it('when a role category is given then only officers in it are returned', async () => {
    const result = await searchPeople(deps, { name: `Laura ${token} Conti`, roleCategory: 'statutory_auditor', limit: 10 });
    expect(result.people[0]!.roles).toEqual([expect.objectContaining({ kind: 'officer', roleCategory: 'statutory_auditor', company: expect.objectContaining({ fiscalCode: b }) })]);
  });
});
