import type { Language } from '../../core/companies/endpoint-catalogue.js';
import { documentTexts } from '../openapi/texts.js';
import { escapeHtml } from './render-markdown.js';

/** Ids of the page's own elements: the guide's headings never take them (render-markdown.ts). */
export const guidePageIds = ['top', 'lang-en', 'lang-it', 'reference', 'markdown', 'guide'] as const;

/** The getting-started guide as a page: the /docs page's header (language switch, a way back to
 * the reference) around the guide's HTML. Links switch language with ?lang=, as on /docs. */
export function renderGuidePage(language: Language, guide: { html: string; title: string }): string {
  const t = documentTexts[language].docsPage;
  const link = (lang: Language, label: string) =>
    lang === language
      ? `<strong id="lang-${lang}" aria-current="true">${label}</strong>`
      : `<a id="lang-${lang}" href="/docs/getting-started?lang=${lang}" hreflang="${lang}">${label}</a>`;
  const markdownHref = `/docs/getting-started?lang=${language}&amp;format=md`;
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(guide.title)}</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/guide.css">
<link rel="alternate" type="text/markdown" href="${markdownHref}">
</head>
<body id="top">
<header class="docs">
  <a id="reference" href="/docs?lang=${language}" hreflang="${language}">${escapeHtml(t.heading)}</a>
  <nav class="lang" aria-label="${escapeHtml(t.switchLabel)}">${escapeHtml(t.switchLabel)}: ${link('en', 'English')} ${link('it', 'Italiano')}</nav>
</header>
<main id="guide">
${guide.html}</main>
<footer><a id="markdown" href="${markdownHref}" type="text/markdown">${escapeHtml(t.guideMarkdown)}</a></footer>
</body>
</html>
`;
}

/** Served as /docs/assets/guide.css: a file, so the page's CSP can forbid inline styles. */
export const guideStylesheet = `body { margin: 0; font-family: system-ui, sans-serif; line-height: 1.5; color: #1b1b1b; }
header.docs { display: flex; justify-content: space-between; align-items: center; gap: 12px; padding: 12px 24px; border-bottom: 1px solid #ddd; }
nav.lang a, nav.lang strong { margin-left: 8px; }
main, footer { max-width: 60rem; padding: 0 24px; margin: 0 auto; }
footer { padding-bottom: 24px; }
h1 { font-size: 1.8rem; }
h2 { margin-top: 2rem; border-bottom: 1px solid #eee; }
code { font-family: ui-monospace, monospace; font-size: 0.9em; background: #f4f4f4; padding: 0 3px; border-radius: 3px; }
pre { background: #f4f4f4; padding: 12px; overflow-x: auto; border-radius: 4px; }
pre code { padding: 0; background: none; }
table { border-collapse: collapse; margin: 1rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid #ddd; padding: 6px 10px; text-align: left; vertical-align: top; }
th { background: #f7f7f7; }
`;
