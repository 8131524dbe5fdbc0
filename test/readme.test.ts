import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configVariables } from '../core/config/index.js';

// The README's configuration table is the operator's reference: it must name every variable
// the config schema reads, and nothing the schema does not know.
describe('README configuration table', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.split('## Configuration')[1]?.split('\n## ')[0] ?? '';
  const documented = new Set([...section.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));

  it('when the config schema has a variable then the README documents it', () => {
    expect(configVariables.filter((v) => !documented.has(v))).toEqual([]);
  });

  it('when the README documents a variable then the config schema knows it', () => {
    expect([...documented].filter((v) => !(configVariables as string[]).includes(v!))).toEqual([]);
  });
});
