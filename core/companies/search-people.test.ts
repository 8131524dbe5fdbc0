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
const [a, b, parent, owned] = [next(), next(), next(), next()];
// Holders of `owned`: which of them a people search may list (the import's kind, given or inferred).
const holders = {
  foreignByForm: { name: `${token} Beteiligungs GmbH`, share: 0.3 },
  foreignByCode: { name: `${token} Nordsee Partner`, share: 0.2, fiscalCode: 'DEHRB12345678901' },
  saidCompany: { name: `Anna ${token} Trust`, share: 0.2, kind: 'company' as const },
  person: { name: `Paolo ${token} Neri`, share: 0.3 },
  ownerByForm: { name: `${token} Ridge Holdings Inc.`, share: 0.3 },
  owner: { name: `Paolo ${token} Neri`, share: 0.3 },
};

beforeAll(async () => {
  await upsertCompanies(db, [
    dossier(parent, { legalName: `${token} Parent SPA` }),
    dossier(a, {
      officers: [{ name: `Laura ${token} Conti`, role: 'Presidente', roleCategory: 'board_member' }],
      shareholders: [{ name: `${token} Parent SPA`, share: 0.5, fiscalCode: parent }, { name: `LAURA  ${token} CONTI`, share: 0.5 }],
    }),
    dossier(b, { officers: [{ name: `Laura ${token} Conti`, role: 'Sindaco', roleCategory: 'statutory_auditor' }] }),
    dossier(owned, {
      shareholders: [holders.foreignByForm, holders.foreignByCode, holders.saidCompany, holders.person],
      beneficialOwners: [holders.ownerByForm, holders.owner],
    }),
  ]);
});
afterAll(() => db.destroy());

describe('searchPeople', () => {
  it('when one name holds several roles then they come back under one person, spelling and spacing differences merged', async () => {
    const result = await searchPeople(deps, { name: `conti laura ${token}`, limit: 10 });
    expect(result.people).toHaveLength(1);
    expect(result.people[0]!.roles.map((r) => `${r.kind}:${r.company.fiscalCode}`).sort()).toEqual([`officer:${a}`, `officer:${b}`, `shareholder:${a}`].sort());
    // Shown as one of its spellings, with single spaces (one was imported as "LAURA  … CONTI").
    expect([`Laura ${token} Conti`, `LAURA ${token} CONTI`]).toContain(result.people[0]!.name);
  });

  it('when a shareholder is a company then a people search does not list it', async () => {
    const result = await searchPeople(deps, { name: `${token} Parent`, limit: 10 });
    expect(result.people).toEqual([]);
  });

  it('when holders are foreign companies (by legal form, by a foreign code, or said so) then a people search lists only the people among them', async () => {
    const result = await searchPeople(deps, { name: token, limit: 25 });
    const found = result.people.filter((p) => p.roles.some((r) => r.company.fiscalCode === owned));
    expect(found.map((p) => p.name)).toEqual([holders.person.name]);
    expect(found[0]!.roles.map((r) => r.kind).sort()).toEqual(['beneficial_owner', 'shareholder']);
    for (const company of [holders.foreignByForm, holders.foreignByCode, holders.saidCompany, holders.ownerByForm]) {
      expect((await searchPeople(deps, { name: company.name, limit: 25 })).people.map((p) => p.name), company.name).not.toContain(company.name);
    }
  });

  it('when holders are imported then each is stored with its kind, given or inferred', async () => {
    const rows = await db('company_holders').join('companies', 'companies.id', 'company_holders.company_id')
      .where('companies.fiscal_code', owned).orderBy(['relation', 'position']).select('relation', 'name', 'holder_kind');
    expect(rows).toEqual([
      { relation: 'beneficial_owner', name: holders.ownerByForm.name, holder_kind: 'company' },
      { relation: 'beneficial_owner', name: holders.owner.name, holder_kind: 'person' },
      { relation: 'shareholder', name: holders.foreignByForm.name, holder_kind: 'company' },
      { relation: 'shareholder', name: holders.foreignByCode.name, holder_kind: 'company' },
      { relation: 'shareholder', name: holders.saidCompany.name, holder_kind: 'company' },
      { relation: 'shareholder', name: holders.person.name, holder_kind: 'person' },
    ]);
  });

  it('when one person\'s name is written with accents, as a registry writes them (vowel and apostrophe) or without, then any of the spellings finds one person with every role', async () => {
    const [first, second] = [next(), next()];
    await upsertCompanies(db, [
      dossier(first, { officers: [{ name: `NICOLO' ${token} PIRRO'`, role: 'Amministratore unico', roleCategory: 'legal_representative' }] }),
      dossier(second, { shareholders: [{ name: `Nicolò ${token} Pirrò`, share: 0.4 }, { name: `${token} Seconda S.r.l.`, share: 0.6 }] }),
    ]);
    for (const name of [`nicolo ${token} pirro`, `Nicolò ${token} Pirrò`, `NICOLO' ${token}`]) {
      const { people } = await searchPeople(deps, { name, limit: 10 });
      const found = people.filter((p) => p.roles.some((r) => [first, second].includes(r.company.fiscalCode)));
      expect(found, name).toHaveLength(1);
      expect(found[0]!.roles.map((r) => `${r.kind}:${r.company.fiscalCode}`).sort(), name).toEqual([`officer:${first}`, `shareholder:${second}`].sort());
      expect(found[0]!.score, name).toBe(1);
    }
  });

  it('when a role category is given then only officers in it are returned', async () => {
    const result = await searchPeople(deps, { name: `Laura ${token} Conti`, roleCategory: 'statutory_auditor', limit: 10 });
    expect(result.people[0]!.roles).toEqual([expect.objectContaining({ kind: 'officer', roleCategory: 'statutory_auditor', company: expect.objectContaining({ fiscalCode: b }) })]);
  });
});
