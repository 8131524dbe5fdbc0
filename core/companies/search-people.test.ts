import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBase62 } from '../ids/index.js';
import { makeCodiceFiscale } from '../sample-data/index.js';
import { createLogger } from '../logging/index.js';
import { testDb } from '../../test/support/database.js';
import { dossier, fiscalCodes } from '../../test/support/company-dossiers.js';
import { MAX_ROLES_PER_PERSON, searchPeople, searchPeopleInputSchema, type SearchPeopleInput } from './search-people.js';
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

/** Every page of a search, in order. */
async function allPages(input: Omit<SearchPeopleInput, 'cursor'>) {
  const pages = [];
  let cursor: string | undefined;
  do {
    const page = await searchPeople(deps, { ...input, ...(cursor && { cursor }) });
    pages.push(page.people);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return pages;
}

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
    const [first, second, third] = [next(), next(), next()];
    await upsertCompanies(db, [
      dossier(first, { officers: [{ name: `NICOLO' ${token} PIRRO'`, role: 'Amministratore unico', roleCategory: 'legal_representative' }] }),
      dossier(second, { shareholders: [{ name: `Nicolò ${token} Pirrò`, share: 0.4 }, { name: `${token} Seconda S.r.l.`, share: 0.6 }] }),
      dossier(third, { officers: [{ name: `NICOLO ${token} PIRRO`, role: 'Sindaco', roleCategory: 'statutory_auditor' }] }),
    ]);
    for (const name of [`nicolo ${token} pirro`, `Nicolò ${token} Pirrò`, `NICOLO' ${token}`]) {
      const { people } = await searchPeople(deps, { name, limit: 10 });
      const found = people.filter((p) => p.roles.some((r) => [first, second, third].includes(r.company.fiscalCode)));
      expect(found, name).toHaveLength(1);
      expect(found[0]!.roles.map((r) => `${r.kind}:${r.company.fiscalCode}`).sort(), name).toEqual([`officer:${first}`, `shareholder:${second}`, `officer:${third}`].sort());
      expect(found[0]!.score, name).toBe(1);
    }
  });

  it('when a surname is registered with its elision and without (D\'Amico, Damico) then either spelling, alone or with the first name before or after it, finds one person with every role', async () => {
    const [first, second, third, fourth] = [next(), next(), next(), next()];
    const surname = `A${token}`; // "D'A…" and "DA…", as D'Amico and Damico
    await upsertCompanies(db, [
      dossier(first, { officers: [{ name: `D'${surname.toUpperCase()} MARIO`, role: 'Amministratore unico', roleCategory: 'legal_representative' }] }),
      dossier(second, { officers: [{ name: `D${surname.toUpperCase()} MARIO`, role: 'Sindaco', roleCategory: 'statutory_auditor' }] }),
      dossier(third, { shareholders: [{ name: `Mario D’${surname}`, share: 0.4 }, { name: `${token} Terza S.r.l.`, share: 0.6 }] }),
      dossier(fourth, { officers: [{ name: `DELL'O${token.toUpperCase()} LUCA`, role: 'Consigliere', roleCategory: 'board_member' }] }),
    ]);
    const mario = [`officer:${first}`, `officer:${second}`, `shareholder:${third}`].sort();
    for (const name of [`D${surname}`, `D'${surname}`, `D’${surname}`, `d ${surname}`, `Mario D${surname}`, `d'${surname} mario`]) {
      const { people } = await searchPeople(deps, { name, limit: 10 });
      const found = people.filter((p) => p.roles.some((r) => [first, second, third].includes(r.company.fiscalCode)));
      expect(found, name).toHaveLength(1);
      expect(found[0]!.roles.map((r) => `${r.kind}:${r.company.fiscalCode}`).sort(), name).toEqual(mario);
      if (!name.startsWith('d ')) expect(found[0]!.score, name).toBe(1);
      // Each role says the spelling its company filed.
      expect(Object.fromEntries(found[0]!.roles.map((r) => [r.company.fiscalCode, r.name])), name).toEqual({
        [first]: `D'${surname.toUpperCase()} MARIO`, [second]: `D${surname.toUpperCase()} MARIO`, [third]: `Mario D’${surname}`,
      });
    }
    for (const name of [`Dello${token}`, `Dell'O${token}`]) {
      const { people } = await searchPeople(deps, { name, limit: 10 });
      expect(people.map((p) => p.roles.map((r) => r.company.fiscalCode)), name).toEqual([[fourth]]);
      expect(people[0]!.score, name).toBe(1);
    }
  });

  it('when a registry writes the surname first and a filing the first name first then both are one person', async () => {
    const [first, second] = [next(), next()];
    await upsertCompanies(db, [
      dossier(first, { officers: [{ name: `${token}ORDINE GIULIA`, role: 'Amministratore unico', roleCategory: 'legal_representative' }] }),
      dossier(second, { shareholders: [{ name: `Giulia ${token}Ordine`, share: 1 }] }),
    ]);
    for (const name of [`Giulia ${token}Ordine`, `${token}ordine giulia`, `${token}Ordine`]) {
      const { people } = await searchPeople(deps, { name, limit: 10 });
      expect(people.map((p) => p.roles.map((r) => `${r.kind}:${r.company.fiscalCode}`).sort()), name).toEqual([[`officer:${first}`, `shareholder:${second}`]]);
      expect(people[0]!.score, name).toBe(1);
    }
  });

  it('when a surname\'s particle is written apart or joined (DE ROSA, DEROSA; DELL ACQUA for DELL\'ACQUA) or a double first name with a hyphen then each spelling finds one person', async () => {
    const [first, second, third, fourth, fifth] = [next(), next(), next(), next(), next()];
    const surname = `R${token}`; // as Rosa, after "De"
    await upsertCompanies(db, [
      dossier(first, { officers: [{ name: `DE ${surname.toUpperCase()} SALVATORE`, role: 'Sindaco', roleCategory: 'statutory_auditor' }] }),
      dossier(second, { shareholders: [{ name: `Salvatore De${surname.toLowerCase()}`, share: 0.5 }, { name: `${token} Quinta S.r.l.`, share: 0.5 }] }),
      dossier(third, { officers: [{ name: `Anna-Lisa E${token}`, role: 'Procuratore', roleCategory: 'proxy' }] }),
      dossier(fourth, { officers: [{ name: `Anna Lisa E${token}`, role: 'Consigliere', roleCategory: 'board_member' }] }),
      dossier(fifth, { officers: [{ name: `PIERO DELL U${token.toUpperCase()}`, role: 'Amministratore unico', roleCategory: 'legal_representative' }] }),
    ]);
    for (const name of [`De ${surname}`, `De${surname}`, `Salvatore De ${surname}`, `de${surname} salvatore`]) {
      const { people } = await searchPeople(deps, { name, limit: 10 });
      const found = people.filter((p) => p.roles.some((r) => [first, second].includes(r.company.fiscalCode)));
      expect(found.map((p) => p.roles.map((r) => r.company.fiscalCode).sort()), name).toEqual([[first, second].sort()]);
      expect(found[0]!.score, name).toBe(1);
    }
    const annaLisa = (await searchPeople(deps, { name: `Anna Lisa E${token}`, limit: 10 })).people;
    expect(annaLisa.map((p) => p.roles.map((r) => r.company.fiscalCode).sort())).toEqual([[third, fourth].sort()]);
    for (const name of [`Piero Dell'U${token}`, `Dell'U${token}`, `DellU${token}`]) {
      const { people } = await searchPeople(deps, { name, limit: 10 });
      const found = people.filter((p) => p.roles.some((r) => r.company.fiscalCode === fifth));
      expect(found.map((p) => [p.roles.length, p.score]), name).toEqual([[1, 1]]);
    }
  });

  it('when a person holds a stake through her sole proprietorship (a company on file under her codice fiscale) then it is listed as hers', async () => {
    const [held, other] = [next(), next()];
    const surname = `I${token}`;
    const ditta = makeCodiceFiscale({ surname, name: 'Alessia', sex: 'F', birthYear: 1990, birthMonth: 12, birthDay: 9, belfiore: 'F952' });
    await upsertCompanies(db, [
      dossier(ditta, { legalName: `${surname.toUpperCase()} ALESSIA`, legalForm: 'DI' }),
      dossier(held, { shareholders: [{ name: `${surname} Alessia`, share: 0.16, fiscalCode: ditta }, { name: `${token} Sesta S.r.l.`, share: 0.84 }] }),
      // A company (not a sole proprietorship) holding a stake is no person.
      dossier(other, { shareholders: [{ name: `${token} Sesta S.r.l.`, share: 1, fiscalCode: held }] }),
    ]);
    const { people } = await searchPeople(deps, { name: `Alessia ${surname}`, limit: 10 });
    expect(people.map((p) => p.roles.map((r) => `${r.kind}:${r.company.fiscalCode}:${r.share}`))).toEqual([[`shareholder:${held}:0.16`]]);
    const sesta = await searchPeople(deps, { name: `${token} Sesta S.r.l.`, limit: 25 });
    expect(sesta.people.flatMap((p) => p.roles).filter((r) => r.company.fiscalCode === other)).toEqual([]);
  });

  it('when the name is a codice fiscale or a company\'s code then it is refused saying people are found by name, not read as a name that matches nobody', () => {
    for (const name of ['LMBDNC79E13H199R', 'lmbdnc79e13h199r', 'LMB DNC 79E13 H199R']) {
      expect(searchPeopleInputSchema.safeParse({ name }).error?.issues.map((i) => i.message), name)
        .toEqual([expect.stringMatching(/^a codice fiscale: people are found by name only/)]);
    }
    for (const name of ['01126670213', 'IT01126670213']) {
      expect(searchPeopleInputSchema.safeParse({ name }).error?.issues.map((i) => i.message), name)
        .toEqual([expect.stringMatching(/^a company's fiscal code or VAT number: people are found by name/)]);
    }
    expect(searchPeopleInputSchema.safeParse({ name: 'Rossi Mario 1980' }).success).toBe(true);
  });

  it('when a role category is given then only officers in it are returned', async () => {
    const result = await searchPeople(deps, { name: `Laura ${token} Conti`, roleCategory: 'statutory_auditor', limit: 10 });
    expect(result.people[0]!.roles).toEqual([expect.objectContaining({ kind: 'officer', roleCategory: 'statutory_auditor', company: expect.objectContaining({ fiscalCode: b }) })]);
  });

  it('when people share a name fragment then the pages list each once, best score first and then by name, each with its own roles', async () => {
    const codes = [next(), next(), next(), next()];
    const names = [`${token}Pagina Anna`, `${token}Pagina Bruno`, `${token}Pagina Carla`];
    await upsertCompanies(db, [
      dossier(codes[0]!, { officers: [{ name: names[1]!, role: 'Consigliere', roleCategory: 'board_member' }] }),
      dossier(codes[1]!, { officers: [{ name: names[0]!, role: 'Consigliere', roleCategory: 'board_member' }] }),
      dossier(codes[2]!, { shareholders: [{ name: names[2]!, share: 1 }], officers: [{ name: names[0]!, role: 'Sindaco', roleCategory: 'statutory_auditor' }] }),
      // Similar enough to be found, not holding the fragment: after every name that holds it.
      dossier(codes[3]!, { officers: [{ name: `${token}Pagin Dario`, role: 'Consigliere', roleCategory: 'board_member' }] }),
    ]);
    const pages = await allPages({ name: `${token}Pagina`, limit: 1 });
    expect(pages.map((people) => people.length)).toEqual([1, 1, 1, 1]);
    const people = pages.flat();
    expect(people.map((p) => p.name)).toEqual([...names, `${token}Pagin Dario`]);
    expect(people.map((p) => p.score)).toEqual([1, 1, 1, expect.any(Number)]);
    expect(people[3]!.score).toBeLessThan(1);
    expect(people.map((p) => p.roles.map((r) => `${r.kind}:${r.company.fiscalCode}`).sort())).toEqual([
      [`officer:${codes[1]}`, `officer:${codes[2]}`], [`officer:${codes[0]}`], [`shareholder:${codes[2]}`], [`officer:${codes[3]}`],
    ]);
  });

  it(`when a person holds more than ${MAX_ROLES_PER_PERSON} roles then all are counted and the first ${MAX_ROLES_PER_PERSON} imported are listed, by company name`, async () => {
    const name = `Maria ${token}Molti`;
    const codes = Array.from({ length: MAX_ROLES_PER_PERSON + 2 }, () => next());
    // Named in the reverse of their import's order: the first imported are the last by name.
    const legalName = (i: number) => `${token} Ruoli ${String(codes.length - i).padStart(3, '0')} SRL`;
    await upsertCompanies(db, codes.map((code, i) => dossier(code, { legalName: legalName(i), officers: [{ name, role: 'Consigliere', roleCategory: 'board_member' }] })));
    const [person, ...others] = (await searchPeople(deps, { name, limit: 10 })).people;
    expect(others).toEqual([]);
    expect(person!.roleCount).toBe(MAX_ROLES_PER_PERSON + 2);
    expect(person!.roles).toHaveLength(MAX_ROLES_PER_PERSON);
    expect(person!.roles.map((r) => r.company.legalName)).toEqual(codes.slice(0, MAX_ROLES_PER_PERSON).map((_, i) => legalName(i)).sort());
  });

  it('when the name is two letters then it finds the people with that word in their name, not those with a word that begins with it or holds it', async () => {
    // Two letters are no trigram for the name index: as a fragment ("%wu%") the search would read
    // every name there is, and by word similarity it would list every name with a word beginning
    // with them (a tenth of all names for "Ro").
    const codes = [next(), next(), next(), next()];
    const names = [`WU ${token}`, `WU LI ${token}`, `Wulfrano ${token}`, `${token} Kawuna`];
    await upsertCompanies(db, codes.map((code, i) => dossier(code, { officers: [{ name: names[i]!, role: 'Consigliere', roleCategory: 'board_member' }] })));
    const found = async (name: string) => (await allPages({ name, limit: 25 })).flat()
      .filter((p) => p.roles.some((r) => codes.includes(r.company.fiscalCode))).map((p) => [p.name, p.score]);
    expect(await found('Wu')).toEqual([[`WU LI ${token}`, 1], [`WU ${token}`, 1]]);
    // Each word whole, in any order.
    expect(await found('Li Wu')).toEqual([[`WU LI ${token}`, 1]]);
  });

  it('when the name is two letters and a registry wrote that word\'s accent as an apostrophe then it finds the word', async () => {
    const code = next();
    await upsertCompanies(db, [dossier(code, { officers: [{ name: `LU' ${token}`, role: 'Consigliere', roleCategory: 'board_member' }] })]);
    const found = (await allPages({ name: 'Lu', limit: 25 })).flat().filter((p) => p.roles.some((r) => r.company.fiscalCode === code));
    expect(found.map((p) => [p.name, p.score])).toEqual([[`LU' ${token}`, 1]]);
  });

  it('when the name has three letters in a row of any script then it is a fragment, as in ASCII', async () => {
    const code = next();
    await upsertCompanies(db, [dossier(code, { officers: [{ name: `Zoëlla ${token}`, role: 'Consigliere', roleCategory: 'board_member' }] })]);
    const found = (await allPages({ name: 'Zoë', limit: 25 })).flat().filter((p) => p.roles.some((r) => r.company.fiscalCode === code));
    expect(found.map((p) => p.name)).toEqual([`Zoëlla ${token}`]);
  });
});
