// The folder boundaries of style.md, enforced: the three processes share only core/,
// and core/ stays transport-agnostic (no Koa, no Kafka client, no MCP SDK).
import tseslint from 'typescript-eslint';

const processes = ['api', 'mcp', 'billing-worker', 'dashboard'];
const crossImports = (self) =>
  processes
    .filter((p) => p !== self)
    .map((p) => ({ group: [`**/${p}/**`, `../${p}/*`, `../../${p}/*`], message: `${self}/ must not import ${p}/: share code through core/.` }));

export default tseslint.config(
  // What .gitignore keeps out of the repository (builds, local data, scratch work) is not linted.
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'coverage/**', '.bench/**', '.scratch-*/**', '**/*.tmp.ts'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  ...processes.map((p) => ({
    files: [`${p}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: crossImports(p) }] },
  })),
  {
    files: ['core/**/*.ts'],
    ignores: ['core/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['koa', '@koa/*', 'kafkajs', '@modelcontextprotocol/*'], message: 'core/ is transport-agnostic: Koa, kafkajs and the MCP SDK belong in api/, mcp/, billing-worker/ or an adapter passed in.' },
          { group: ['**/api/**', '**/mcp/**', '**/billing-worker/**', '**/cli/**'], message: 'core/ must not import the processes.' },
        ],
      }],
    },
  },
  {
    files: ['migrations/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/core/**', '**/api/**', '**/mcp/**', '**/cli/**', '**/billing-worker/**'], message: 'Migrations import no application code: they must replay identically forever.' }] }] },
  },
);
