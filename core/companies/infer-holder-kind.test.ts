import { describe, expect, it } from 'vitest';
import { inferHolderKind, LEGAL_FORM_SUFFIXES } from './infer-holder-kind.js';

const byName = (name: string) => inferHolderKind({ name, fiscalCode: null });

describe('inferHolderKind', () => {
  it('when a name ends in a foreign legal form then the holder is a company (the sample data\'s foreign parents among them)', () => {
    for (const name of [
      'Müller Beteiligungs GmbH', 'Dupont Participations SAS', 'Van der Berg Holding B.V.', 'García Inversiones S.L.',
      'Nordic Industrial Holdings AB', 'Atlantic Capital Partners Ltd', 'Schneider Industrie AG', 'Lefèvre Groupe SA',
      'Hudson Ridge Holdings Inc.', 'Alpen Invest AG', 'Acme Corp.', 'Acme Corporation', 'Acme LLC', 'Acme L.L.C.', 'Acme Limited',
      'Acme plc', 'Acme PLC', 'Acme SARL', 'Acme S.A.', 'Acme NV', 'Acme Oy', 'Dansk Invest A/S', 'Dansk ApS',
      'Schmidt GmbH & Co. KG', 'Acme SE', 'Acme sp. z o.o.',
    ]) expect(byName(name), name).toBe('company');
  });

  it('when a name ends in an Italian legal form, with or without dots, in any case, or in liquidation, then the holder is a company', () => {
    for (const name of [
      'Bianchi Holding S.p.A.', 'Bianchi Holding SpA', 'BIANCHI HOLDING SPA', 'Rossi S.r.l.', 'Rossi Srl', 'ROSSI SRL', 'Rossi s.r.l',
      'Rossi S. r. l.', 'Rossi S.r.l.s.', 'Rossi & C. S.a.s.', 'Rossi e Bianchi S.n.c.', 'Agricola Verdi S.S.', 'Edil Coop S.c.a.r.l.',
      'Lavoro Insieme Soc. coop.', 'Lavoro Insieme Soc. Coop. a r.l.', 'Lavoro Insieme Società Cooperativa', 'Rossi S.r.l. in liquidazione',
      'ROSSI SRL IN LIQUIDAZIONE', 'Rossi, S.r.l.', 'S.r.l.',
    ]) expect(byName(name), name).toBe('company');
  });

  it('when a name ends in no legal form then the holder is a person, also when a form\'s letters end a word or stand inside the name', () => {
    for (const name of [
      'Laura Bianchi', 'ROSSI MARIO', 'Anna Sassi', 'Agostino Spadoni', 'Marco Bellini', 'Gaia Agnelli', 'Sergio Corporale',
      'Giovanni Ltdi', 'Maria de Sa Pereira', 'Holding', 'Rossi Holding', 'Anna Spagnoli', 'Luca Abbate',
    ]) expect(byName(name), name).toBe('person');
  });

  it('when every listed form ends a name, bare, upper-cased and without its dots, then each is a company', () => {
    for (const form of LEGAL_FORM_SUFFIXES) {
      for (const written of [form, form.toUpperCase(), form.replace(/\./g, '')]) expect(byName(`Esempio ${written}`), written).toBe('company');
    }
  });

  it('when the fiscal code is not a person\'s then the holder is a company, whatever its name; a person\'s code leaves it to the name', () => {
    expect(inferHolderKind({ name: 'Laura Bianchi', fiscalCode: '03551940288' })).toBe('company');
    expect(inferHolderKind({ name: 'Laura Bianchi', fiscalCode: 'DEHRB12345678901' })).toBe('company');
    expect(inferHolderKind({ name: null, fiscalCode: 'GB12345678901234' })).toBe('company');
    expect(inferHolderKind({ name: 'Laura Bianchi', fiscalCode: 'BNCLRA80A41F205X' })).toBe('person');
    // Omocodia: digits replaced by letters from the right.
    expect(inferHolderKind({ name: 'Laura Bianchi', fiscalCode: 'BNCLRA80A41F20RX' })).toBe('person');
    expect(inferHolderKind({ name: 'Bianchi S.r.l.', fiscalCode: 'BNCLRA80A41F205X' })).toBe('company');
  });

  it('when neither name nor code is known then the holder is a person (nothing points at an entity)', () => {
    expect(inferHolderKind({ name: null, fiscalCode: null })).toBe('person');
  });
});
