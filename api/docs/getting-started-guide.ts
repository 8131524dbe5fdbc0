import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Language } from '../../core/companies/endpoint-catalogue.js';
import { guidePageIds, renderGuidePage } from './getting-started-page.js';
import { renderMarkdown } from './render-markdown.js';

// The customers' guide, docs/getting-started.md (and .it.md): one file is both what the
// repository shows and what the API serves, so the two cannot drift apart. Served as a page
// (rendered here) and, for tools, as the Markdown it is written in. The image copies
// docs/getting-started*.md (Dockerfile).
export const guideFiles: Record<Language, string> = { en: 'getting-started.md', it: 'getting-started.it.md' };

/** Walks up from this file to the folder holding docs/ (sources and dist/ alike). */
function findDocsDir(start = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = start;
  for (;;) {
    const candidate = path.join(dir, 'docs');
    if (existsSync(path.join(candidate, guideFiles.en))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`docs/${guideFiles.en} not found above ${start}`);
    dir = parent;
  }
}

/**
 * Where a link of the guide goes on the served page. The guide links to other docs/*.md files,
 * which work in the repository but not beside the API: a link to a guide (either language) goes
 * to that guide's page, and a document the API does not serve (api.md, mcp.md: for operators, or
 * read in the repository) keeps its text, without a link, rather than a link that is a 404.
 * Anchors stay as they are (headings get GitHub's ids); absolute http(s) links too. Anything
 * else (javascript:, a relative path) is text.
 */
export function guideLinkTarget(target: string): string | undefined {
  if (target.startsWith('#')) return target;
  if (/^https?:\/\//i.test(target)) return target;
  const [file, fragment] = target.split('#', 2) as [string, string | undefined];
  const language = (Object.keys(guideFiles) as Language[]).find((lang) => guideFiles[lang] === file);
  if (!language) return undefined;
  return `/docs/getting-started?lang=${language}${fragment ? `#${fragment}` : ''}`;
}

/** The address the guide's files name for the API: a local `npm start`'s (API_PORT's default). */
export const guideLocalBaseUrl = 'http://127.0.0.1:3000';
/** And for the tool server (MCP_PORT's default). */
export const guideLocalMcpUrl = 'http://127.0.0.1:3001';
// Not a longer port that starts with the same digits (http://127.0.0.1:30001).
const exactly = (address: string) => new RegExp(`${address.replace(/[.]/g, '\\.')}(?!\\d)`, 'g');

/** What the MCP command names when the API does not know the tool server's address (a
 * deployment without PUBLIC_MCP_URL): a placeholder the reader sees is not an address, which the
 * text beside it says the account manager gives. */
export const guideMcpPlaceholder: Record<Language, string> = {
  en: '<the tool server address your account manager gives you>',
  it: '<indirizzo del server MCP dato dal tuo account manager>',
};

/**
 * The guide as this API serves it: its own public address (PUBLIC_BASE_URL) in place of the
 * local one, in the text and in the commands, so a customer of a deployed service copies
 * commands that reach it; the same for the tool server's (PUBLIC_MCP_URL, or a local start's);
 * unknown (undefined: a deployment that names its API but not its tool server), a placeholder,
 * not this host's local address, which would be no customer's. The files keep the local
 * addresses: the repository's readers run it locally, and so do the tests.
 */
export function withBaseUrl(markdown: string, language: Language, publicBaseUrl: string, publicMcpUrl: string | undefined): string {
  const withApi = markdown.replace(exactly(guideLocalBaseUrl), () => publicBaseUrl.replace(/\/+$/, ''));
  return withApi.replace(exactly(guideLocalMcpUrl), () => publicMcpUrl?.replace(/\/+$/, '') ?? guideMcpPlaceholder[language]);
}

export interface GuideVersions {
  /** The file as it is written, with this API's address (withBaseUrl). */
  markdown: Buffer;
  /** The whole page. */
  html: Buffer;
}

/**
 * The guide in each language, read and rendered once, when the API starts (a page costs nothing
 * per request beyond sending these buffers, which compress-answer.ts also compresses once). A
 * failed read (a deployment without the file) is tried again on the next request.
 */
export function createGettingStartedGuide(options: { publicBaseUrl: string; publicMcpUrl: string | undefined }): { get(language: Language): Promise<GuideVersions> } {
  const loaded = new Map<Language, Promise<GuideVersions>>();
  const load = (language: Language) => {
    const versions = Promise.resolve().then(async () => {
      const markdown = withBaseUrl(await readFile(path.join(findDocsDir(), guideFiles[language]), 'utf8'), language, options.publicBaseUrl, options.publicMcpUrl);
      const page = renderGuidePage(language, renderMarkdown(markdown, { link: guideLinkTarget, reservedIds: guidePageIds }));
      return { markdown: Buffer.from(markdown), html: Buffer.from(page) };
    });
    versions.catch(() => loaded.delete(language));
    loaded.set(language, versions);
    return versions;
  };
  for (const language of Object.keys(guideFiles) as Language[]) load(language);
  return { get: (language) => loaded.get(language) ?? load(language) };
}
