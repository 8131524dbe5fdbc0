import { foldPlaceName as fold, placeNames } from './place-names.js';

// The search's province filter takes a province's code (sigla: MI). Agents pass its name
// ("Milano", "Milan") or a code no province has ("XX"): the name was refused without the code it
// stands for, and a code of no province answered an empty page, read as "no company there". The
// codes and names are ISTAT's (place-names.ts); codes of provinces abolished since (the
// registry's older rows may hold them) are found where on file.

// Names the list does not hold, folded: English ones, and the short form of Reggio nell'Emilia.
const OTHER_NAMES: Record<string, string> = {
  milan: 'MI', rome: 'RM', turin: 'TO', naples: 'NA', florence: 'FI', venice: 'VE', genoa: 'GE', padua: 'PD', mantua: 'MN', syracuse: 'SR',
  'reggio emilia': 'RE',
};

let provinces: { loaded: boolean; codes: Set<string>; byName: Map<string, string> } | undefined;
function list() {
  if (!provinces) {
    const read = placeNames()?.provinces;
    const byName = new Map<string, string>(Object.entries(OTHER_NAMES));
    // Each name of a bilingual province too: "Bolzano/Bozen" is Bolzano and Bozen.
    for (const p of read ?? []) for (const name of [p.name, ...p.name.split('/')]) byName.set(fold(name), p.sigla);
    provinces = { loaded: read !== undefined, codes: new Set((read ?? []).map((p) => p.sigla)), byName };
  }
  return provinces;
}

/** The code of the province a name stands for ("Milano", "milan", "Reggio Emilia"), if any. */
export function provinceCodeOf(name: string): string | undefined {
  return list().byName.get(fold(name));
}

/** Whether a code is a province's in ISTAT's list (true when the list could not be read). */
export function isProvinceCode(code: string): boolean {
  return !list().loaded || list().codes.has(code.toUpperCase());
}
