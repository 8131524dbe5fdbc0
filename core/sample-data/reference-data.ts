import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Real municipalities and ATECO codes from data/reference/ (see its README for sources and
// licences). Read from disk rather than imported: the files are 2 MB and must be found both
// from the TypeScript sources and from the compiled dist/ tree.

export interface Comune {
  name: string;
  /** Province code, e.g. MI. */
  sigla: string;
  /** ISTAT province code (e.g. 15 for Milano): the partita IVA office code. */
  provinceCode: number;
  /** Codice catastale, as used in the codice fiscale. */
  belfiore: string;
  postalCodes: string[];
  population: number;
}

export interface AtecoCode {
  /** Six-digit sottocategoria, e.g. 62.01.00. */
  code: string;
  /** NACE Rev. 2 class, e.g. 62.01 (the first four ATECO digits). */
  naceCode: string;
  /** NACE division, e.g. 62. */
  division: string;
  /** NACE section letter A..U. */
  section: string;
  description: string;
}

export interface ReferenceData {
  comuni: Comune[];
  ateco: AtecoCode[];
}

interface RawComune {
  nome: string;
  sigla: string;
  provincia: { codice: string };
  codiceCatastale: string;
  cap: string[];
  popolazione: number;
}

/** Walks up from this file to the folder holding data/reference (sources and dist/ alike). */
export function findReferenceDir(start = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = start;
  for (;;) {
    const candidate = path.join(dir, 'data', 'reference');
    if (existsSync(path.join(candidate, 'comuni.json'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`data/reference/comuni.json not found above ${start}`);
    dir = parent;
  }
}

/**
 * The comuni's names and the provinces (code and name, each once), without the rest: what the
 * company search's municipality and province filters check names against.
 */
export function loadPlaceNames(dir = findReferenceDir()): { comuni: string[]; provinces: { sigla: string; name: string }[] } {
  const raw = JSON.parse(readFileSync(path.join(dir, 'comuni.json'), 'utf8')) as { nome: string; sigla: string; provincia: { nome: string } }[];
  return {
    comuni: raw.map((c) => c.nome),
    provinces: [...new Map(raw.map((c) => [c.sigla, c.provincia.nome])).entries()].map(([sigla, name]) => ({ sigla, name })),
  };
}

export function loadReferenceData(dir = findReferenceDir()): ReferenceData {
  const rawComuni = JSON.parse(readFileSync(path.join(dir, 'comuni.json'), 'utf8')) as RawComune[];
  const comuni: Comune[] = rawComuni
    .filter((c) => c.cap.length > 0 && /^[A-Z]\d{3}$/.test(c.codiceCatastale))
    .map((c) => ({
      name: c.nome,
      sigla: c.sigla,
      provinceCode: Number(c.provincia.codice),
      belfiore: c.codiceCatastale,
      postalCodes: c.cap,
      population: c.popolazione,
    }));

  const rawAteco = JSON.parse(readFileSync(path.join(dir, 'ateco2007-sections.json'), 'utf8')) as { _id: string; desc: string }[];
  const ateco: AtecoCode[] = [];
  for (const node of rawAteco) {
    const match = /^([A-U])\.(\d{2})\.(\d{2})\.(\d{2})$/.exec(node._id);
    if (!match) continue;
    const [, section, division, group, sub] = match as unknown as [string, string, string, string, string];
    ateco.push({ code: `${division}.${group}.${sub}`, naceCode: `${division}.${group}`, division, section, description: node.desc });
  }
  return { comuni, ateco };
}
