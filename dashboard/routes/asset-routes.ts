import { createHash } from 'node:crypto';
import type { Router } from '@koa/router';
import { appJs, iconSvg } from '../assets/app-js.js';
import { appCss } from '../assets/app-css.js';
import type { DashboardState } from '../state.js';

const assets: Record<string, { type: string; body: string }> = {
  'app.css': { type: 'text/css; charset=utf-8', body: appCss },
  'app.js': { type: 'text/javascript; charset=utf-8', body: appJs },
  'icon.svg': { type: 'image/svg+xml', body: iconSvg },
};
const etags = new Map(Object.entries(assets).map(([name, a]) => [name, `"${createHash('sha256').update(a.body).digest('base64url').slice(0, 16)}"`]));

export function registerAssetRoutes(router: Router<DashboardState>): void {
  router.get('/assets/:name', (ctx) => {
    const asset = assets[ctx.params.name!];
    if (!asset) return;
    const etag = etags.get(ctx.params.name!)!;
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', 'public, max-age=300');
    if (ctx.get('If-None-Match') === etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = asset.body;
  });
}
