import type { Router } from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { AppError } from '../../core/errors/index.js';
import { createDocsAssets } from '../docs/docs-assets.js';
import { docsClientScript, docsStylesheet, renderDocsPage } from '../docs/docs-page.js';
import { createGettingStartedGuide } from '../docs/getting-started-guide.js';
import { guideStylesheet } from '../docs/getting-started-page.js';
import { assetSecurityHeaders, guidePageHeaders, referencePageHeaders } from '../docs/page-security-headers.js';
import { requestLanguage } from '../language.js';
import { unknownPath } from '../unknown-endpoint.js';
import type { OpenApiDocuments } from '../openapi/openapi-documents.js';
import type { ApiState } from '../state.js';

// The reference for people: the full catalogue, no key needed.
export function registerDocs(router: Router<ApiState>, deps: { documents: OpenApiDocuments; publicBaseUrl: string; publicMcpUrl: string | undefined }): void {
  const assets = createDocsAssets({
    'docs.js': { body: Buffer.from(docsClientScript), type: 'text/javascript; charset=utf-8' },
    'docs.css': { body: Buffer.from(docsStylesheet), type: 'text/css; charset=utf-8' },
    'guide.css': { body: Buffer.from(guideStylesheet), type: 'text/css; charset=utf-8' },
  });
  const guide = createGettingStartedGuide({ publicBaseUrl: deps.publicBaseUrl, publicMcpUrl: deps.publicMcpUrl });
  const referenceHeaders = referencePageHeaders(deps.publicBaseUrl);

  // The language may come from Accept-Language: a shared cache must keep one copy per value.
  router.get('/docs', (ctx) => {
    const language = requestLanguage(ctx);
    ctx.set('Content-Language', language);
    ctx.vary('Accept-Language');
    ctx.set(referenceHeaders);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderDocsPage(language);
  });

  router.get('/docs/openapi.json', async (ctx) => {
    const language = requestLanguage(ctx);
    ctx.set('Content-Language', language);
    ctx.vary('Accept-Language');
    ctx.set(assetSecurityHeaders);
    ctx.body = await deps.documents.catalogue(language);
  });

  // The getting-started guide for customers (docs/getting-started.md), which the dashboard's
  // keys page and /docs link to: a page for people; the Markdown it is written in for a tool
  // that asks for it (Accept: text/markdown, or text/plain as before the page) and for
  // ?format=md, which a browser can open too (as plain text: some download text/markdown).
  router.get('/docs/getting-started', async (ctx) => {
    const language = requestLanguage(ctx);
    const format = guideFormat(ctx);
    const versions = await guide.get(language);
    ctx.set('Content-Language', language);
    ctx.vary('Accept');
    ctx.vary('Accept-Language');
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set(guidePageHeaders);
    // The type before the body: Koa gives a Buffer body without one application/octet-stream.
    ctx.type = format === 'html' ? 'text/html; charset=utf-8' : `${format}; charset=utf-8`;
    ctx.body = format === 'html' ? versions.html : versions.markdown;
  });

  router.get('/docs/assets/:file', async (ctx) => {
    const asset = assets.get(ctx.params.file ?? '');
    if (!asset) throw unknownPath(ctx.method, ctx.path, () => false);
    const { body, type } = await asset;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set(assetSecurityHeaders);
    ctx.type = type;
    ctx.body = body;
  });
}

const guideFormats = { md: 'text/plain', markdown: 'text/plain', html: 'html' } as const;

/** ?format= (the first, if repeated) wins; otherwise Accept, the page unless text/markdown or
 * text/plain is preferred to HTML (a browser's Accept, curl's and no Accept at all get the page). */
function guideFormat(ctx: ParameterizedContext): 'html' | 'text/markdown' | 'text/plain' {
  const raw = ctx.query.format;
  const asked = Array.isArray(raw) ? raw[0] : raw;
  if (asked !== undefined) {
    const format = Object.hasOwn(guideFormats, asked) ? guideFormats[asked as keyof typeof guideFormats] : undefined;
    if (!format) throw new AppError('invalid_params', 'format must be md (the Markdown, as text) or html (the page).', { details: [{ path: 'query.format', message: 'must be md or html' }] });
    return format;
  }
  const accepted = ctx.accepts('text/html', 'text/markdown', 'text/plain');
  return accepted === 'text/markdown' || accepted === 'text/plain' ? accepted : 'html';
}
