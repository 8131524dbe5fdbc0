import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Language } from '../../core/companies/endpoint-catalogue.js';

// The customers' guide, docs/getting-started.md (and .it.md), served as it is written beside the
// reference: Markdown reads as plain text, and one file is both what the repository shows and
// what the API serves, so the two cannot drift apart. The image copies docs/getting-started*.md
// (Dockerfile).
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

/** The guide in each language, read once when first asked for and kept in memory. */
export function createGettingStartedGuide(): { get(language: Language): Promise<string> } {
  const loaded = new Map<Language, Promise<string>>();
  return {
    get(language) {
      let text = loaded.get(language);
      if (!text) {
        text = Promise.resolve().then(() => readFile(path.join(findDocsDir(), guideFiles[language]), 'utf8'));
        // A failed read (a deployment without the file) is tried again on the next request.
        text.catch(() => loaded.delete(language));
        loaded.set(language, text);
      }
      return text;
    },
  };
}
