import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

// Swagger UI comes from the swagger-ui-dist npm package, served from node_modules: the page
// must work with no network beyond loopback, so nothing is loaded from a CDN. Only the files
// the page uses are exposed (no directory listing, no path traversal).
const swaggerFiles: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

export interface DocsAsset {
  body: Buffer;
  type: string;
}

export function createDocsAssets(extra: Record<string, DocsAsset>) {
  // Resolve the folder, not the package: its main module loads the whole Swagger UI bundle into
  // the API process (+40 MB RSS) only to say where it lives.
  const directory = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const loaded = new Map<string, Promise<DocsAsset>>(Object.entries(extra).map(([name, asset]) => [name, Promise.resolve(asset)]));
  return {
    /** The asset, read once and kept in memory; undefined for any name not on the list. */
    get(name: string): Promise<DocsAsset> | undefined {
      // Own names only: `constructor` or `toString` would otherwise pass as files of the list.
      const type = Object.hasOwn(swaggerFiles, name) ? swaggerFiles[name] : undefined;
      if (!loaded.has(name) && type !== undefined) {
        loaded.set(name, readFile(path.join(directory, name)).then((body) => ({ body, type })));
      }
      return loaded.get(name);
    },
  };
}
