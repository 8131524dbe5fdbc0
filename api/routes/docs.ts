import type { Router } from '@koa/router';
import { createDocsAssets } from '../docs/docs-assets.js';
import { docsClientScript, renderDocsPage } from '../docs/docs-page.js';
import { createGettingStartedGuide } from '../docs/getting-started-guide.js';
import { requestLanguage } from '../language.js';
import { unknownPath } from '../unknown-endpoint.js';
import type { OpenApiDocuments } from '../openapi/openapi-documents.js';
import type { ApiState } from '../state.js';

// The reference for people: the full catalogue, no key needed.
export function registerDocs(router: Router<ApiState>, deps: { documents: OpenApiDocuments }): void {
  const assets = createDocsAssets({ 'docs.js': { body: Buffer.from(docsClientScript), type: 'text/javascript; charset=utf-8' } });
  const guide = createGettingStartedGuide();

  // The language may come from Accept-Language: a shared cache must keep one copy per value.
  router.get('/docs', (ctx) => {
    const language = requestLanguage(ctx);
    ctx.set('Content-Language', language);
    ctx.vary('Accept-Language');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderDocsPage(language);
  });

  router.get('/docs/openapi.json', async (ctx) => {
    const language = requestLanguage(ctx);
    ctx.set('Content-Language', language);
    ctx.vary('Accept-Language');
    ctx.body = await deps.documents.catalogue(language);
  });

  // The getting-started guide for customers (docs/getting-started.md), which the dashboard's
  // keys page and /docs link to. Plain text: every browser shows it, where text/markdown is
  // downloaded by some.
  router.get('/docs/getting-started', async (ctx) => {
    const language = requestLanguage(ctx);
    const text = await guide.get(language);
    ctx.set('Content-Language', language);
    ctx.vary('Accept-Language');
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = text;
  });

  router.get('/docs/assets/:file', async (ctx) => {
    const asset = assets.get(ctx.params.file ?? '');
    if (!asset) throw unknownPath(ctx.method, ctx.path, () => false);
    const { body, type } = await asset;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = type;
    ctx.body = body;
  });
}
