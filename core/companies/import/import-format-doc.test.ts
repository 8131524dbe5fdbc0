import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { metricCatalogue } from '../metric-catalogue.js';
import { companyDossierSchema } from '../schemas/index.js';
import { parseDossierLine } from './parse-dossier-line.js';

const doc = readFileSync(new URL('../../../docs/import-format.md', import.meta.url), 'utf8');

describe('docs/import-format.md', () => {
  it('when the example line is parsed then it is one valid dossier on one line', () => {
    const block = /<!-- example-line[^>]*-->\s*```json\n([\s\S]*?)\n```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    expect(block!.split('\n')).toHaveLength(1);
    const entry = parseDossierLine(block!, 1);
    expect(entry?.ok ? 'ok' : JSON.stringify(entry)).toBe('ok');
  });

  it('when the schema changes then every top-level field is documented', () => {
    for (const field of Object.keys(companyDossierSchema.shape)) expect(doc, field).toContain(`\`${field}\``);
  });

  it('when the catalogue changes then the documented slug count follows', () => {
    expect(doc).toContain(`defines ${metricCatalogue.length} slugs`);
  });
});
