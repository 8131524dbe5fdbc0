import type { Language } from '../../core/companies/endpoint-catalogue.js';
import { documentTexts } from '../openapi/texts.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// A server-rendered shell around Swagger UI. Switching language is a plain link (?lang=..):
// the page and the catalogue document it loads are both rendered in that language, which
// works without any client-side state.
export function renderDocsPage(language: Language): string {
  const t = documentTexts[language];
  const link = (lang: Language, label: string) =>
    lang === language
      ? `<strong id="lang-${lang}" aria-current="true">${label}</strong>`
      : `<a id="lang-${lang}" href="/docs?lang=${lang}" hreflang="${lang}">${label}</a>`;
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(t.title)} — ${escapeHtml(t.docsPage.heading)}</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/assets/docs.css">
</head>
<body>
<header class="docs">
  <h1>${escapeHtml(t.docsPage.heading)}</h1>
  <nav class="lang" aria-label="${escapeHtml(t.docsPage.switchLabel)}">${escapeHtml(t.docsPage.switchLabel)}: ${link('en', 'English')} ${link('it', 'Italiano')}</nav>
</header>
<p class="intro">${escapeHtml(t.docsPage.intro)} <a id="getting-started" href="/docs/getting-started?lang=${language}" hreflang="${language}">${escapeHtml(t.docsPage.guideLink)}</a></p>
<div id="swagger-ui" data-spec-url="/docs/openapi.json?lang=${language}"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>
`;
}

/** Served as /docs/assets/docs.css: a file, not a <style> block, so the page's CSP needs no
 * 'unsafe-inline' (page-security-headers.ts). */
export const docsStylesheet = `body { margin: 0; font-family: system-ui, sans-serif; }
header.docs { display: flex; justify-content: space-between; align-items: center; padding: 12px 24px; border-bottom: 1px solid #ddd; }
header.docs h1 { font-size: 1.2rem; margin: 0; }
nav.lang a, nav.lang strong { margin-left: 8px; }
p.intro { padding: 0 24px; color: #444; }
`;

/**
 * Served as /docs/assets/docs.js (a file, not inline, so a strict CSP can forbid inline scripts).
 * The tag's name is the same in both languages (api/openapi/build-document.ts) and Swagger UI
 * has no notion of `x-displayName`, which says the heading in the document's language: the
 * plugin shows it in the tag's heading (its DeepLink text) in place of the name. Links and the
 * open/closed state still use the name, so #/Companies/… opens the same group in either language.
 *
 * Swagger UI has no translations of its own labels either ("Parameters", "Try it out",
 * "Responses"…): on the Italian page each text node that is exactly one of them is rewritten as
 * it appears, except inside the document's own texts and code (descriptions, examples, answers).
 * React sets a text node's value when it changes and never reads it back, so a label it redraws
 * is rewritten again.
 */
export const docsClientScript = `(function () {
  var el = document.getElementById('swagger-ui');
  var italian = {
    'Servers': 'Server', 'Authorize': 'Autorizza', 'Available authorizations': 'Autorizzazioni disponibili',
    'Close': 'Chiudi', 'Logout': 'Esci', 'Value:': 'Valore:', 'Parameters': 'Parametri', 'No parameters': 'Nessun parametro',
    'Try it out': 'Prova', 'Cancel': 'Annulla', 'Execute': 'Esegui', 'Clear': 'Pulisci', 'Name': 'Nome',
    'Description': 'Descrizione', 'Responses': 'Risposte', 'Code': 'Codice', 'Links': 'Link', 'No links': 'Nessun link',
    'Media type': 'Tipo di contenuto', 'Controls': "Imposta l'header", 'header.': '.', 'Example Value': 'Valore di esempio',
    'Schemas': 'Schemi', 'Request URL': 'URL della richiesta', 'Server response': 'Risposta del server',
    'Response body': 'Corpo della risposta', 'Response headers': 'Header della risposta', 'Details': 'Dettagli',
    'Download': 'Scarica', 'Undocumented': 'Non documentata', 'required': 'obbligatorio', 'Loading...': 'Caricamento…'
  };
  var own = '.markdown, .renderedMarkdown, pre, code, textarea, .model-box, .parameter__name, .opblock-summary, .opblock-tag';
  function translate(root) {
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (var node = root.nodeType === 3 ? root : walker.nextNode(); node; node = walker.nextNode()) {
      var text = node.nodeValue, key = text.trim(), parent = node.parentElement;
      if (!italian.hasOwnProperty(key) || !parent || parent.closest(own)) continue;
      // "Controls <code>Accept</code> header.": the full stop straight after the code.
      node.nodeValue = key === 'header.' ? '.' : text.replace(key, italian[key]);
    }
  }
  if (document.documentElement.lang === 'it') {
    new MutationObserver(function (changes) {
      changes.forEach(function (change) {
        if (change.type === 'characterData') translate(change.target);
        else change.addedNodes.forEach(function (added) { translate(added); });
      });
    }).observe(el, { childList: true, subtree: true, characterData: true });
  }
  function TagDisplayNames() {
    return {
      wrapComponents: {
        DeepLink: function (Original, system) {
          return function (props) {
            var tags = system.specSelectors.specJson().get('tags');
            var tag = tags && tags.find(function (t) { return t && t.get('name') === props.text; });
            var shown = tag && tag.get('x-displayName');
            return system.React.createElement(Original, shown ? Object.assign({}, props, { text: shown }) : props);
          };
        }
      }
    };
  }
  window.ui = SwaggerUIBundle({
    url: el.getAttribute('data-spec-url'),
    dom_id: '#swagger-ui',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [TagDisplayNames],
    layout: 'BaseLayout'
  });
})();
`;
