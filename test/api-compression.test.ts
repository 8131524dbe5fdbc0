import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, ensureExampleCompany, exampleCompanyCode, startTestApi, type TestApi, type TestOrganization } from './api-fixtures.js';

// Answers of 1 KB or more are gzip-compressed for clients that ask, through a real server; the
// bytes are read raw (fetch would decompress them unseen).
let api: TestApi;
let org: TestOrganization;

beforeAll(async () => {
  api = await startTestApi();
  await ensureExampleCompany(api.db);
  org = await createTestOrganization(api.db);
});
afterAll(async () => {
  await api?.close();
});

function get(path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(`${api.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('when a client accepts gzip', () => {
  it('then a report comes compressed, its Content-Length the compressed size, and unpacks to the answer a client without gzip gets', async () => {
    const auth = { Authorization: `Bearer ${org.key}` };
    const plain = await get(`/companies/${exampleCompanyCode}/report`, auth);
    const packed = await get(`/companies/${exampleCompanyCode}/report`, { ...auth, 'Accept-Encoding': 'gzip, deflate, br' });
    expect([plain.status, packed.status]).toEqual([200, 200]);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(packed.headers['content-encoding']).toBe('gzip');
    expect(packed.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(packed.headers['content-length'])).toBe(packed.bytes.length);
    // The gzip answer says it varies by Accept-Encoding, for private caches (a browser's, an HTTP
    // client's). The plain one, asked without Accept-Encoding, suits any client: no Vary needed.
    expect(packed.headers.vary).toMatch(/\bAccept-Encoding\b/);
    expect(plain.headers.vary ?? '').not.toMatch(/\bAccept-Encoding\b/);
    const unpacked = JSON.parse(gunzipSync(packed.bytes).toString('utf8')) as { data: unknown; meta: { requestId: string } };
    const original = JSON.parse(plain.bytes.toString('utf8')) as { data: unknown; meta: { requestId: string } };
    expect(unpacked.data).toEqual(original.data);
    expect(unpacked.meta.requestId).toBe(packed.headers['x-request-id']);
    expect(packed.bytes.length).toBeLessThan(plain.bytes.length / 2);
  });

  it('then the OpenAPI document and the docs page come compressed too, but a small error envelope, and a client that refuses gzip, get plain bytes', async () => {
    const document = await get('/openapi.json', { Authorization: `Bearer ${org.key}`, 'Accept-Encoding': 'gzip' });
    expect(document.headers['content-encoding']).toBe('gzip');
    expect((JSON.parse(gunzipSync(document.bytes).toString('utf8')) as { openapi: string }).openapi).toBe('3.1.0');
    const asset = await get('/docs', { 'Accept-Encoding': 'gzip' });
    expect(asset.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(asset.bytes).toString('utf8')).toMatch(/^<!doctype html>/i);
    // The docs page is public, so a shared cache may keep it: one copy per Accept-Encoding.
    expect(asset.headers.vary).toMatch(/\bAccept-Encoding\b/);

    const missing = await get(`/companies/00000000000/report`, { Authorization: `Bearer ${org.key}`, 'Accept-Encoding': 'gzip' });
    expect(missing.status).toBe(404);
    expect(missing.headers['content-encoding']).toBeUndefined();
    expect((JSON.parse(missing.bytes.toString('utf8')) as { error: { code: string } }).error.code).toBe('not_found');
    const refused = await get(`/companies/${exampleCompanyCode}/report`, { Authorization: `Bearer ${org.key}`, 'Accept-Encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(refused.bytes.toString('utf8'))).toHaveProperty('data');
  });
});
