import type { CompanyDossierInput, roleCategoryValues } from '../companies/schemas/index.js';
// The importer's own rounding of changes, so a generated change is the one it would derive.
import { round4 } from '../companies/derive-year-figures.js';
import { makeCodiceFiscale } from './codice-fiscale.js';
import { generateStatements, type SizeClass, type YearFigures } from './financial-statements.js';
import { AGE_YEARS, latestYearRefusal, MAX_FILED_YEARS, MAX_YEARS_SINCE_DISSOLUTION } from './latest-year-range.js';
import { femaleNames, foreignParents, maleNames, namePrefixes, sectorWords, streets, surnames } from './names.js';
import { makePartitaIva, MAX_PROGRESSIVE } from './partita-iva.js';
import { createRng, createWeightedPicker, type Rng, type WeightedPicker } from './prng.js';
import { loadReferenceData, type AtecoCode, type Comune, type ReferenceData } from './reference-data.js';

// Deterministic synthetic Italian companies in the canonical import format. Two passes:
// a sequential "skeleton" pass decides who everybody is (codes, names, forms, who owns whom),
// so ownership can point at other companies of the set; then each dossier is filled in from
// its own seeded stream (seed, index), so the output for a seed never depends on timing.

export const SAMPLE_SOURCE = 'synthetic-sample';
/** The most recent fiscal year with filed accounts; fixed so output never depends on the clock. */
export const DEFAULT_LATEST_YEAR = 2025;

export interface GenerateOptions {
  count: number;
  seed: number;
  latestYear?: number;
  /** Emit previousValue / yoyChange / employeesYoY (the importer derives them when omitted). */
  includeDerivedChanges?: boolean;
  reference?: ReferenceData;
}

type RoleCategory = (typeof roleCategoryValues)[number];
type LegalForm = 'SRL' | 'SRLS' | 'SPA' | 'SAPA' | 'SNC' | 'SAS' | 'SS' | 'SC' | 'DI' | 'CONSORZIO' | 'FONDAZIONE' | 'ASSOCIAZIONE' | 'ALTRO';

interface Person {
  name: string; // "Mario Rossi"
  surname: string;
  share: number | null;
}

interface Skeleton {
  fiscalCode: string;
  vatNumber: string;
  legalForm: LegalForm;
  legalName: string;
  sizeTarget: SizeClass;
  ateco: AtecoCode;
  comune: Comune;
  holding: boolean;
  people: Person[];
  /** Companies of the set holding shares: index and share. */
  companyHolders: { index: number; share: number }[];
  foreignParent: string | null;
  /** Top of the ownership chain when a company of the set controls this one, else -1. */
  ultimateParent: number;
  /** Fraction of this company the ultimate parent controls through the chain. */
  ultimateShare: number;
}

// Share of companies by NACE section (roughly the Italian business register).
const sectionWeights: Record<string, number> = {
  A: 4, B: 0.2, C: 11, D: 0.6, E: 0.6, F: 13, G: 25, H: 4, I: 8, J: 3, K: 2, L: 6, M: 8, N: 5, P: 0.8, Q: 2, R: 1.6, S: 4.5,
};
// Large companies cluster in a few divisions so each finds peers (same division, decisions.md).
const largeDivisions = ['10', '20', '28', '29', '35', '46', '47', '52', '62', '64'];
const formBySize: Record<SizeClass, [LegalForm, number][]> = {
  large: [['SPA', 70], ['SRL', 25], ['SC', 5]],
  medium: [['SRL', 60], ['SPA', 25], ['SC', 8], ['CONSORZIO', 4], ['SAS', 3]],
  small: [['SRL', 55], ['SNC', 10], ['SAS', 10], ['SC', 6], ['SPA', 4], ['DI', 8], ['SRLS', 3], ['CONSORZIO', 2], ['ALTRO', 2]],
  micro: [['SRL', 36], ['SRLS', 12], ['DI', 14], ['SNC', 9], ['SAS', 11], ['SS', 4], ['SC', 3], ['CONSORZIO', 1], ['FONDAZIONE', 1.5], ['ASSOCIAZIONE', 1.5], ['SAPA', 0.2], ['ALTRO', 1.8]],
};
const minimumCapital: Record<LegalForm, number> = {
  SRL: 10_000, SRLS: 1_000, SPA: 50_000, SAPA: 50_000, SNC: 5_000, SAS: 5_000, SS: 2_000, SC: 2_500, DI: 0, CONSORZIO: 10_000, FONDAZIONE: 30_000, ASSOCIAZIONE: 0, ALTRO: 10_000,
};
const suffix: Partial<Record<LegalForm, string>> = {
  SRL: 'S.r.l.', SRLS: 'S.r.l.s.', SPA: 'S.p.A.', SAPA: 'S.a.p.a.', SNC: 'S.n.c.', SAS: 'S.a.s.', SS: 'S.s.', SC: 'Società Cooperativa',
};
const pecDomains = ['pec.it', 'legalmail.it', 'arubapec.it', 'pec.cgn.it', 'postecert.it'];

interface Pickers {
  comune: WeightedPicker<Comune>;
  section: WeightedPicker<string>;
  bySection: Map<string, AtecoCode[]>;
  byDivision: Map<string, AtecoCode[]>;
  comuniByProvince: Map<string, Comune[]>;
}

function buildPickers(ref: ReferenceData): Pickers {
  const bySection = new Map<string, AtecoCode[]>();
  const byDivision = new Map<string, AtecoCode[]>();
  for (const code of ref.ateco) {
    (bySection.get(code.section) ?? bySection.set(code.section, []).get(code.section)!).push(code);
    (byDivision.get(code.division) ?? byDivision.set(code.division, []).get(code.division)!).push(code);
  }
  const comuniByProvince = new Map<string, Comune[]>();
  for (const c of ref.comuni) (comuniByProvince.get(c.sigla) ?? comuniByProvince.set(c.sigla, []).get(c.sigla)!).push(c);
  const sections = Object.keys(sectionWeights).filter((s) => bySection.has(s));
  return {
    comune: createWeightedPicker(ref.comuni, (c) => c.population),
    section: createWeightedPicker(sections, (s) => sectionWeights[s] ?? 0),
    bySection,
    byDivision,
    comuniByProvince,
  };
}

const pickWeighted = <T>(rng: Rng, entries: readonly [T, number][]): T => {
  const total = entries.reduce((s, [, w]) => s + w, 0);
  let target = rng.next() * total;
  for (const [item, w] of entries) {
    target -= w;
    if (target < 0) return item;
  }
  return entries[entries.length - 1]![0];
};

function newPerson(rng: Rng, share: number | null): Person & { sex: 'M' | 'F'; first: string } {
  const sex = rng.chance(0.68) ? 'M' : 'F';
  const first = rng.pick(sex === 'M' ? maleNames : femaleNames);
  const surname = rng.pick(surnames);
  return { name: `${first} ${surname}`, surname, share, sex, first };
}

/** Splits 1 into n shares rounded to 4 decimals that sum exactly to `total`. */
function splitShares(rng: Rng, n: number, total: number): number[] {
  const weights = Array.from({ length: n }, (_, i) => (i === 0 ? 1.5 : 0.5) + rng.next());
  const sum = weights.reduce((a, b) => a + b, 0);
  const shares = weights.map((w) => Math.round((w / sum) * total * 10_000) / 10_000);
  const drift = Math.round((total - shares.reduce((a, b) => a + b, 0)) * 10_000) / 10_000;
  shares[0] = Math.round(((shares[0] as number) + drift) * 10_000) / 10_000;
  return shares;
}

function coreName(rng: Rng, section: string, surname: string, comune: Comune): string {
  const word = rng.pick(sectorWords[section] ?? ['Servizi']);
  switch (rng.int(0, 5)) {
    case 0:
    case 1:
      return `${surname} ${word}`;
    case 2:
      return `${rng.pick(namePrefixes)} ${word}`;
    case 3:
      return `${word} ${comune.name}`;
    case 4:
      return `${rng.pick(namePrefixes)}${word.split(' ')[0]!.toLowerCase()}`;
    default:
      return `${String.fromCharCode(65 + rng.int(0, 25))}.${String.fromCharCode(65 + rng.int(0, 25))}.${String.fromCharCode(65 + rng.int(0, 25))}. ${word}`;
  }
}

function legalNameOf(rng: Rng, form: LegalForm, section: string, people: Person[], comune: Comune, holding: boolean): string {
  const lead = people[0]?.surname ?? rng.pick(surnames);
  if (holding) return `${lead} ${rng.pick(['Holding', 'Partecipazioni', 'Group', 'Investimenti'])} ${suffix[form] ?? 'S.p.A.'}`;
  switch (form) {
    case 'DI':
      return rng.chance(0.5) ? `${lead} ${people[0]?.name.split(' ')[0] ?? ''}`.trim() : `${rng.pick(sectorWords[section] ?? ['Servizi'])} di ${people[0]?.name ?? lead}`;
    case 'SNC': {
      const second = people[1]?.surname;
      return second && second !== lead ? `${lead} & ${second} S.n.c.` : `${lead} ${rng.pick(sectorWords[section] ?? ['Servizi'])} di ${people[0]?.name ?? lead} & C. S.n.c.`;
    }
    case 'SAS':
      return `${people[0]?.name ?? lead} & C. S.a.s.`;
    case 'SS':
      return section === 'A' ? `Società Agricola ${lead} S.s.` : `${rng.pick(['Studio', 'Immobiliare'])} ${lead} S.s.`;
    case 'CONSORZIO':
      return `Consorzio ${coreName(rng, section, lead, comune)}`;
    case 'FONDAZIONE':
      return `Fondazione ${rng.pick(maleNames)} ${lead}`;
    case 'ASSOCIAZIONE':
      return `Associazione ${coreName(rng, section, lead, comune)}`;
    case 'ALTRO':
      return `${coreName(rng, section, lead, comune)} ${rng.pick(['G.E.I.E.', 'Società Consortile a r.l.', 'Rete di Imprese'])}`;
    default:
      return `${coreName(rng, section, lead, comune)} ${suffix[form]}`;
  }
}

function pickAteco(rng: Rng, p: Pickers, form: LegalForm, size: SizeClass, holding: boolean): AtecoCode {
  if (holding) return p.byDivision.get('64')!.find((a) => a.code === '64.20.00') ?? rng.pick(p.byDivision.get('64')!);
  if (size === 'large') return rng.pick(p.byDivision.get(rng.pick(largeDivisions))!);
  if (form === 'FONDAZIONE' || form === 'ASSOCIAZIONE') return rng.pick(p.bySection.get(rng.pick(['P', 'Q', 'R', 'S']))!);
  if (form === 'SS') return rng.pick(p.bySection.get(rng.pick(['A', 'A', 'L', 'M']))!);
  return rng.pick(p.bySection.get(p.section.pick(rng))!);
}

function buildSkeletons(count: number, seed: number, p: Pickers): { skeletons: Skeleton[]; children: Map<number, { index: number; share: number }[]> } {
  const skeletons: Skeleton[] = [];
  const usedCodiciFiscali = new Set<string>();
  // The partita IVA's 7-digit progressive number: an affine permutation of the index, offset by
  // the seed, is unique within a set (the multiplier is coprime with 9,999,999).
  const offset = createRng(seed, 0x5eed).int(0, 9_999_998);
  let chainRemaining = 0;

  for (let i = 0; i < count; i++) {
    const rng = createRng(seed, i, 1);
    let role: 'head' | 'member' | 'none' = 'none';
    if (chainRemaining > 0) {
      role = 'member';
      chainRemaining--;
    } else if (i + 3 < count && rng.chance(0.025)) {
      role = 'head';
      // A owns B owns C owns D...: chains of 3 to 6 companies.
      chainRemaining = rng.int(2, 5);
    }

    const sizeTarget: SizeClass = role === 'head'
      ? pickWeighted(rng, [['large', 45], ['medium', 40], ['small', 15]])
      : pickWeighted(rng, [['micro', 69], ['small', 19.5], ['medium', 7.5], ['large', 4]]);
    const legalForm: LegalForm = role === 'none' ? pickWeighted(rng, formBySize[sizeTarget]) : sizeTarget === 'large' || rng.chance(0.3) ? 'SPA' : 'SRL';
    const holding = role === 'head';
    const ateco = pickAteco(rng, p, legalForm, sizeTarget, holding);
    const comune = p.comune.pick(rng);

    const people: Person[] = [];
    const companyHolders: { index: number; share: number }[] = [];
    let foreignParent: string | null = null;
    let fiscalCode: string;
    const vatNumber = makePartitaIva(((i * 7_654_321 + offset) % MAX_PROGRESSIVE) + 1, comune.provinceCode);

    if (legalForm === 'DI') {
      const owner = newPerson(rng, 1);
      people.push(owner);
      const birthYear = rng.int(1950, 2001);
      const birthMonth = rng.int(1, 12);
      const birthDay = rng.int(1, 28);
      const birthplace = rng.chance(0.7) ? comune : p.comune.pick(rng);
      const person = { surname: owner.surname, name: owner.first, sex: owner.sex, birthYear, birthMonth, birthDay, belfiore: birthplace.belfiore };
      let omocodia = 0;
      fiscalCode = makeCodiceFiscale(person);
      while (usedCodiciFiscali.has(fiscalCode)) fiscalCode = makeCodiceFiscale(person, ++omocodia);
      usedCodiciFiscali.add(fiscalCode);
    } else {
      fiscalCode = vatNumber;
      if (role === 'member') {
        // The previous company (the chain's previous link) controls this one.
        const share = rng.chance(0.6) ? 1 : Math.round((0.51 + rng.next() * 0.45) * 10_000) / 10_000;
        companyHolders.push({ index: i - 1, share });
        if (share < 1) for (const s of splitShares(rng, rng.int(1, 2), Math.round((1 - share) * 10_000) / 10_000)) people.push({ ...newPerson(rng, s) });
      } else if (legalForm === 'CONSORZIO' && i >= 5) {
        // Members of a consortium are companies of the set.
        const members = new Set<number>();
        for (let k = rng.int(2, 5); k > 0; k--) members.add(rng.int(0, i - 1));
        const shares = splitShares(rng, members.size, 1);
        [...members].forEach((index, k) => companyHolders.push({ index, share: shares[k] as number }));
      } else if (legalForm !== 'SC' && legalForm !== 'FONDAZIONE' && legalForm !== 'ASSOCIAZIONE') {
        const partners = legalForm === 'SNC' || legalForm === 'SAS' ? rng.int(2, 3) : legalForm === 'SPA' ? rng.int(2, 6) : rng.int(1, 4);
        let personTotal = 1;
        if ((sizeTarget === 'medium' || sizeTarget === 'large') && rng.chance(0.08)) {
          foreignParent = rng.pick(foreignParents);
          personTotal = rng.chance(0.5) ? 0 : Math.round(rng.next() * 0.3 * 10_000) / 10_000;
        } else if (i > 10 && (legalForm === 'SRL' || legalForm === 'SPA') && rng.chance(0.05)) {
          // A minority stake held by another company of the set.
          const holder = rng.int(0, i - 1);
          if (skeletons[holder]!.legalForm !== 'DI' && skeletons[holder]!.legalForm !== 'ASSOCIAZIONE') {
            const share = Math.round((0.1 + rng.next() * 0.39) * 10_000) / 10_000;
            companyHolders.push({ index: holder, share });
            personTotal = Math.round((1 - share) * 10_000) / 10_000;
          }
        }
        if (personTotal > 0) for (const s of splitShares(rng, partners, personTotal)) people.push(newPerson(rng, s));
      }
    }

    const legalName = legalNameOf(rng, legalForm, ateco.section, people, comune, holding);
    const controller = companyHolders.find((h) => h.share > 0.5);
    const parent = controller ? skeletons[controller.index]! : undefined;
    const ultimateParent = parent ? (parent.ultimateParent >= 0 ? parent.ultimateParent : controller!.index) : -1;
    const ultimateShare = parent ? controller!.share * (parent.ultimateParent >= 0 ? parent.ultimateShare : 1) : 0;
    skeletons.push({ fiscalCode, vatNumber, legalForm, legalName, sizeTarget, ateco, comune, holding, people, companyHolders, foreignParent, ultimateParent, ultimateShare });
  }

  const children = new Map<number, { index: number; share: number }[]>();
  skeletons.forEach((s, index) => {
    for (const h of s.companyHolders) (children.get(h.index) ?? children.set(h.index, []).get(h.index)!).push({ index, share: h.share });
  });
  return { skeletons, children };
}

const pad2 = (n: number) => String(n).padStart(2, '0');
const slugForPec = (s: string) => s.normalize('NFD').replace(/[^A-Za-z0-9]/g, '').toLowerCase().slice(0, 40);

function addressIn(rng: Rng, comune: Comune) {
  return {
    line1: `${rng.pick(streets)}, ${rng.int(1, 180)}`,
    line2: rng.chance(0.1) ? rng.pick(['Scala B', 'Piano 2', 'Zona Industriale', 'Interno 4', 'Località Case Sparse']) : null,
    locality: comune.name,
    postalCode: rng.pick(comune.postalCodes),
    countryCode: 'IT',
  };
}

function officersFor(rng: Rng, form: LegalForm, size: SizeClass, people: Person[], dissolved: boolean) {
  const officer = (role: string, roleCategory: RoleCategory, name?: string) => ({ name: name ?? newPerson(rng, null).name, role, roleCategory });
  const list: ReturnType<typeof officer>[] = [];
  const major = people[0]?.name;
  switch (form) {
    case 'DI':
      list.push(officer('Titolare', 'legal_representative', major));
      break;
    case 'SNC':
    case 'SS':
      for (const p of people) list.push(officer('Socio amministratore', 'legal_representative', p.name));
      break;
    case 'SAS':
    case 'SAPA':
      list.push(officer('Socio accomandatario', 'legal_representative', major));
      break;
    case 'SC':
    case 'CONSORZIO':
      list.push(officer('Presidente del consiglio di amministrazione', 'legal_representative'), officer('Vicepresidente', 'board_member'));
      for (let k = rng.int(1, 3); k > 0; k--) list.push(officer('Consigliere', 'board_member'));
      break;
    case 'FONDAZIONE':
    case 'ASSOCIAZIONE':
      list.push(officer('Presidente', 'legal_representative'), officer('Segretario generale', 'manager'), officer('Revisore dei conti', 'auditor'));
      break;
    case 'ALTRO':
      list.push(officer('Rappresentante legale', 'legal_representative'));
      break;
    default:
      if ((size === 'micro' || size === 'small') && form !== 'SPA' && rng.chance(0.7)) {
        list.push(officer('Amministratore unico', 'legal_representative', rng.chance(0.6) ? major : undefined));
      } else {
        list.push(officer('Presidente del consiglio di amministrazione', 'legal_representative', rng.chance(0.5) ? major : undefined));
        if (size !== 'micro') list.push(officer('Amministratore delegato', 'director'));
        for (let k = rng.int(1, size === 'large' ? 6 : 3); k > 0; k--) list.push(officer('Consigliere', 'board_member'));
      }
  }
  if (form === 'SPA' || form === 'SAPA' || size === 'medium' || size === 'large') {
    list.push(officer('Presidente del collegio sindacale', 'statutory_auditor'), officer('Sindaco effettivo', 'statutory_auditor'), officer('Sindaco effettivo', 'statutory_auditor'), officer('Sindaco supplente', 'statutory_auditor'));
  } else if (size === 'small' && rng.chance(0.3)) list.push(officer('Revisore legale', 'auditor'));
  if (size === 'large') {
    list.push(officer('Direttore generale', 'manager'));
    for (let k = rng.int(1, 3); k > 0; k--) list.push(officer('Procuratore', 'proxy'));
  } else if (size === 'medium' && rng.chance(0.4)) list.push(officer('Procuratore speciale', 'proxy'));
  if (rng.chance(0.03)) list.push(officer('Preposto', 'other'));
  if (dissolved) list.unshift(officer('Liquidatore', 'liquidator'));
  return list;
}

function baseFigures(rng: Rng, s: Skeleton, rpe: number): { employees: number; revenue: number; maxEmployees: number } {
  const noise = () => Math.exp(rng.normal(0, 0.25));
  if (s.holding && s.sizeTarget === 'large') return { employees: rng.int(20, 200), revenue: Math.round(55_000_000 + rng.next() * 250_000_000), maxEmployees: 249 };
  switch (s.sizeTarget) {
    case 'micro': {
      const employees = s.legalForm === 'DI' ? (rng.chance(0.5) ? 0 : rng.int(1, 3)) : rng.int(0, 9);
      return { employees, revenue: Math.round(Math.min(1_800_000, Math.max(25_000, Math.max(1, employees) * rpe * noise()))), maxEmployees: s.legalForm === 'DI' ? 9 : 14 };
    }
    case 'small': {
      const employees = rng.int(10, 49);
      return { employees, revenue: Math.round(Math.min(9_000_000, employees * rpe * noise())), maxEmployees: 70 };
    }
    case 'medium': {
      const employees = rng.int(50, 249);
      return { employees, revenue: Math.round(Math.min(45_000_000, employees * rpe * noise())), maxEmployees: 320 };
    }
    default: {
      const employees = Math.round(280 + Math.exp(rng.normal(6.3, 0.9)));
      return { employees, revenue: Math.round(employees * rpe * noise()), maxEmployees: 100_000 };
    }
  }
}

const holderOf = (s: Skeleton, share: number) => ({ name: s.legalName, share, fiscalCode: s.fiscalCode, kind: 'company' as const });

function buildDossier(index: number, seed: number, latestYear: number, includeDerived: boolean, skeletons: Skeleton[], children: Map<number, { index: number; share: number }[]>, p: Pickers): CompanyDossierInput {
  const s = skeletons[index]!;
  const rng = createRng(seed, index, 2);

  const dissolved = rng.chance(0.05);
  const distressed = dissolved ? rng.chance(0.5) : rng.chance(0.06);
  // Every year below stays within the reach latest-year-range.ts derives the accepted latest
  // years from: draw one further and files for the extreme years would be refused by the import.
  const dissolutionYear = dissolved ? latestYear - rng.int(0, MAX_YEARS_SINCE_DISSOLUTION) : null;
  const lastFiled = dissolutionYear !== null ? dissolutionYear - 1 : rng.chance(0.85) ? latestYear : latestYear - 1;
  const age = Math.min(AGE_YEARS.max, Math.max(AGE_YEARS.min, Math.round(-Math.log(1 - rng.next()) * 16)));
  const foundingYear = lastFiled - age;
  const yearCount = Math.min(age + 1, MAX_FILED_YEARS, pickWeighted(rng, [[3, 20], [4, 18], [5, 16], [6, 13], [7, 10], [8, 9], [9, 7], [10, 7]]));
  const years = Array.from({ length: yearCount }, (_, k) => lastFiled - yearCount + 1 + k);
  const forecast = dissolutionYear === null && lastFiled === latestYear && rng.chance(0.25);
  if (forecast) years.push(lastFiled + 1);

  const profileRpe = { A: 150_000, C: 220_000, D: 900_000, F: 180_000, G: 400_000, H: 160_000, I: 70_000, J: 140_000, K: 700_000, L: 600_000, M: 120_000, N: 60_000, Q: 80_000, S: 60_000 }[s.ateco.section] ?? 150_000;
  const base = baseFigures(rng, s, profileRpe);
  // The figures above describe the company today; start the series lower so growth lands there.
  const startScale = Math.pow(1.035, -(yearCount - 1));
  const figures = generateStatements(rng, {
    section: s.ateco.section,
    years,
    employees: Math.round(base.employees * startScale),
    revenue: Math.round(base.revenue * startScale),
    shareCapital: Math.max(minimumCapital[s.legalForm], s.sizeTarget === 'large' ? rng.int(1, 50) * 1_000_000 : s.sizeTarget === 'medium' ? rng.int(1, 20) * 50_000 : 0),
    distressed,
    holding: s.holding,
    maxEmployees: base.maxEmployees,
  });
  const filed = figures.filter((f) => f.year <= lastFiled);
  const latest = filed[filed.length - 1] as YearFigures;

  const incorporationMonth = rng.int(1, 12);
  const incorporationDay = rng.int(1, 28);
  const incorporationDate = `${foundingYear}-${pad2(incorporationMonth)}-${pad2(incorporationDay)}`;
  const start = new Date(Date.UTC(foundingYear, incorporationMonth - 1, incorporationDay + rng.int(0, 120)));
  const activityStartDate = start.toISOString().slice(0, 10);
  const fiscalYearEnd = rng.chance(0.05) ? '06-30' : '12-31';

  const ultimate = s.ultimateParent >= 0 ? skeletons[s.ultimateParent]! : undefined;
  const controllingEntity = s.foreignParent ?? ultimate?.legalName ?? null;

  // Beneficial owners: people with 25% or more, directly or through the chain of companies.
  const beneficialOwners: { name: string; share: number | null; kind: 'person' }[] = [];
  for (const person of s.people) if ((person.share ?? 0) >= 0.25) beneficialOwners.push({ name: person.name, share: person.share, kind: 'person' });
  if (ultimate) for (const person of ultimate.people) {
    const effective = round4((person.share ?? 0) * s.ultimateShare);
    if (effective >= 0.25) beneficialOwners.push({ name: person.name, share: effective, kind: 'person' });
  }

  const officers = officersFor(rng, s.legalForm, latest.size, s.people, dissolved);
  if (beneficialOwners.length === 0 && s.legalForm !== 'FONDAZIONE' && s.legalForm !== 'ASSOCIAZIONE') {
    // No natural person above 25%: the register names the senior managing official.
    const rep = officers.find((o) => o.roleCategory === 'legal_representative') ?? officers[0];
    if (rep?.name) beneficialOwners.push({ name: rep.name, share: null, kind: 'person' });
  }

  // Every holder says what it is: the import would infer the same for these names, but a generated
  // name is not proof (a foreign parent's legal form may be one the inference does not know).
  const shareholders = [
    ...s.companyHolders.map((h) => holderOf(skeletons[h.index]!, h.share)),
    ...(s.foreignParent ? [{ name: s.foreignParent, share: round4(1 - s.people.reduce((a, p) => a + (p.share ?? 0), 0)), fiscalCode: null, kind: 'company' as const }] : []),
    ...(s.legalForm === 'DI' ? [] : s.people.map((person) => ({ name: person.name, share: person.share, fiscalCode: null, kind: 'person' as const }))),
  ];
  const subsidiaries = (children.get(index) ?? []).map((c) => holderOf(skeletons[c.index]!, c.share));

  const branchCount = s.legalForm === 'DI' ? 0 : s.sizeTarget === 'large' ? rng.int(2, 8) : rng.chance(0.15) ? rng.int(1, 3) : 0;
  const branches = Array.from({ length: branchCount }, () => {
    const where = rng.chance(0.5) ? rng.pick(p.comuniByProvince.get(s.comune.sigla) ?? [s.comune]) : p.comune.pick(rng);
    return { legalName: `${s.legalName} - Unità locale di ${where.name}`, address: addressIn(rng, where) };
  });

  const flag = (p: number) => rng.chance(p * (distressed ? 6 : 1));
  const risk = rng.chance(0.02)
    ? { protestsOfBill: null, insolvencyProceedings: null, insolvencyApplications: null, assetEncumbrances: null, officersWithRiskIndicators: null }
    : {
      protestsOfBill: flag(0.015),
      insolvencyProceedings: dissolved && distressed ? rng.chance(0.5) : flag(0.005),
      insolvencyApplications: flag(0.01),
      assetEncumbrances: flag(0.04),
      officersWithRiskIndicators: flag(0.02),
    };

  const aidRoll = rng.next();
  let stateAids: CompanyDossierInput['stateAids'] = null;
  if (aidRoll < 0.15) stateAids = { count: 0, countLast36Months: 0, amount: 0, amountLast36Months: 0 };
  else if (aidRoll < 0.55) {
    const count = rng.int(1, s.sizeTarget === 'large' ? 25 : 8);
    const recent = rng.int(0, count);
    const perAid = Math.round(2_000 + rng.next() * (s.sizeTarget === 'micro' ? 20_000 : 150_000));
    stateAids = { count, countLast36Months: recent, amount: count * perAid, amountLast36Months: recent * perAid };
  }

  let prevFigures: YearFigures | undefined;
  const dossierYears = figures.map((f) => {
    const isForecasted = f.year > lastFiled;
    const metrics = f.reported.map((slug) => {
      const value = f.values[slug] as number;
      if (!includeDerived) return { slug, value };
      const previous = prevFigures && prevFigures.reported.includes(slug) ? (prevFigures.values[slug] as number) : null;
      return { slug, value, previousValue: previous, yoyChange: previous ? round4((value - previous) / Math.abs(previous)) : null };
    });
    const year = {
      year: f.year,
      isForecasted,
      size: f.size,
      statementDate: isForecasted ? null : fiscalYearEnd === '12-31' ? `${f.year}-12-31` : `${f.year}-06-30`,
      employees: f.employees,
      ...(includeDerived ? { employeesYoY: prevFigures && prevFigures.employees > 0 ? round4((f.employees - prevFigures.employees) / prevFigures.employees) : null } : {}),
      metrics,
    };
    prevFigures = f;
    return year;
  });

  return {
    fiscalCode: s.fiscalCode,
    vatNumber: s.vatNumber,
    legalName: s.legalName,
    legalForm: s.legalForm,
    foundingYear,
    incorporationDate,
    isQuoted: s.legalForm === 'SPA' && latest.size === 'large' ? rng.chance(0.15) : false,
    naceCode: s.ateco.naceCode,
    naceSection: s.ateco.section as CompanyDossierInput['naceSection'],
    atecoCode: s.ateco.code,
    address: addressIn(rng, s.comune),
    province: s.comune.sigla,
    municipality: s.comune.name,
    activityStartDate,
    dissolutionYear,
    foreignOwned: s.foreignParent !== null,
    controllingEntity,
    isConsolidated: subsidiaries.length > 0 && latest.size !== 'micro' && rng.chance(0.5),
    registry: {
      pec: `${slugForPec(s.legalName)}@${rng.pick(pecDomains)}`,
      cciaa: s.comune.sigla,
      rea: `${s.comune.sigla}-${rng.int(100_000, 2_899_999)}`,
    },
    headcount: rng.chance(0.03) ? null : { employees: latest.employees, asOf: `${lastFiled}-12-31` },
    risk,
    stateAids,
    shareholders,
    beneficialOwners,
    subsidiaries,
    officers,
    branches,
    years: dossierYears,
    source: SAMPLE_SOURCE,
  };
}

/**
 * The most companies one file can hold: company i's VAT number (its fiscal code) takes the
 * progressive number i × 7,654,321 + offset modulo MAX_PROGRESSIVE, distinct for each i up to
 * that many (7,654,321 and 9,999,999 have no common factor); past it codes would repeat, and an
 * import would overwrite the earlier companies with the later ones.
 */
export const MAX_SAMPLE_COMPANIES = MAX_PROGRESSIVE;

/** Yields `count` dossiers, identical for the same (count, seed, latestYear). */
export function* generateDossiers(options: GenerateOptions): Generator<CompanyDossierInput> {
  if (!Number.isInteger(options.count) || options.count < 0) throw new Error(`count must be a non-negative integer, got ${options.count}`);
  if (options.count > MAX_SAMPLE_COMPANIES) throw new Error(`count must be at most ${MAX_SAMPLE_COMPANIES} (each company needs a VAT number of its own), got ${options.count}`);
  if (!Number.isInteger(options.seed)) throw new Error(`seed must be an integer, got ${options.seed}`);
  const latestYear = options.latestYear ?? DEFAULT_LATEST_YEAR;
  const refusal = latestYearRefusal(latestYear);
  if (refusal !== null) throw new Error(`latestYear ${refusal}, got ${latestYear}`);
  const pickers = buildPickers(options.reference ?? loadReferenceData());
  const { skeletons, children } = buildSkeletons(options.count, options.seed, pickers);
  const includeDerived = options.includeDerivedChanges ?? false;
  for (let i = 0; i < options.count; i++) yield buildDossier(i, options.seed, latestYear, includeDerived, skeletons, children, pickers);
}
