import { existsSync } from 'node:fs';
import http from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../core/auth/index.js';
import { createOrganization } from '../core/billing/index.js';
import { hashToken } from '../core/dashboard-auth/index.js';
import { browserForFile, chromiumPath, createMember, dashboardForFile, signInInBrowser, uniqueEmail } from './dashboard-fixtures.js';

// A form that makes a secret sent again once the browser has begun following the first one's 303:
// the server has answered that GET (and shown the secret to it), but the browser drops the answer
// for the repeat's. The page the browser lands on must still show the secret, never "nothing new
// was made". Made deterministic by holding the first GET's answer in the browser until the form
// has been sent again.

const env = dashboardForFile();

/**
 * An HTTP proxy in front of the dashboard (the browser talks to it) that can hold back its answer
 * to the next GET of a path after the dashboard has sent that answer in full: the server has done
 * all it does for that GET, and the browser has not seen it.
 */
function holdingProxy() {
  const posts: string[] = [];
  let hold: { path: string; answered: () => void; released: Promise<unknown> } | undefined;
  const server = http.createServer((req, res) => {
    const target = new URL(env.dashboard.url);
    res.on('error', () => undefined);
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, async (answer) => {
      const body: Buffer[] = [];
      for await (const chunk of answer) body.push(chunk as Buffer);
      if (req.method === 'POST') posts.push(`${req.url} ${answer.statusCode} ${answer.headers.location}`);
      const held = hold && req.method === 'GET' && req.url === hold.path ? hold : undefined;
      if (held) {
        hold = undefined;
        held.answered();
        await held.released;
      }
      // Given up by the browser meanwhile: nothing to answer.
      if (req.socket.destroyed) return;
      res.writeHead(answer.statusCode!, answer.headers).end(Buffer.concat(body));
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return {
    server,
    /** Each POST's path, status and location, as the dashboard answered them. */
    posts,
    get url() {
      const address = server.address() as { port: number };
      return `http://127.0.0.1:${address.port}`;
    },
    holdNextGet(path: string) {
      let answered!: () => void;
      let release!: () => void;
      const done = new Promise<void>((resolve) => { answered = resolve; });
      const released = Promise.race([new Promise<void>((resolve) => { release = resolve; }), new Promise((r) => setTimeout(r, 5_000))]);
      hold = { path, answered, released };
      return { answered: done, release: () => release() };
    },
  };
}

const proxy = holdingProxy();
beforeAll(async () => {
  await new Promise<void>((resolve) => proxy.server.listen(43001, '127.0.0.1', resolve));
});
afterAll(async () => {
  proxy.server.closeAllConnections();
  await new Promise((resolve) => proxy.server.close(resolve));
});

describe.skipIf(!existsSync(chromiumPath))('a form sent again while the browser follows its first answer', () => {
  const chrome = browserForFile();

  /** Signs a new admin of a new organization in on `path`, runs `use`, and closes the context. */
  async function asNewAdmin(name: string, path: string, use: (page: Page, orgId: string) => Promise<void>): Promise<void> {
    const { id: orgId } = await createOrganization(env.db, { name, planId: 'standard' });
    const admin = await createMember(env.db, orgId, 'admin');
    const context = await chrome.browser.newContext();
    try {
      const page = await context.newPage();
      await signInInBrowser(page, proxy.url, admin.email, admin.password);
      await page.goto(`${proxy.url}${path.replace(':org', orgId)}`);
      await use(page, orgId);
    } finally {
      await context.close();
    }
  }

  /**
   * Presses Enter on `button`; once the server has answered the GET that follows the 303 (an
   * answer the proxy holds back from the browser), presses Enter again on the page still shown.
   * Returns the POSTs (path, status and location), in order.
   */
  async function enterTwiceAcrossTheRedirect(page: Page, path: string, button: ReturnType<Page['getByRole']>): Promise<string[]> {
    const before = proxy.posts.length;
    const posts = () => proxy.posts.slice(before);
    const firstGet = proxy.holdNextGet(path);
    await button.focus();
    await page.keyboard.press('Enter');
    await firstGet.answered;
    // The page the browser lands on (the old one, of the same address, is loaded already).
    const landed = page.waitForEvent('load');
    await page.keyboard.press('Enter');
    await expect.poll(() => posts().length).toBe(2);
    firstGet.release();
    await landed;
    expect(new URL(page.url()).pathname).toBe(path);
    return posts();
  }

  it('when an admin presses Enter on "Create key" again as the keys page loads, then one key is made and the page shows it', async () => {
    await asNewAdmin('Key repeat across redirect test', '/orgs/:org/keys', async (page, orgId) => {
      await page.getByLabel('Name').fill('ERP sync');
      const posts = await enterTwiceAcrossTheRedirect(page, `/orgs/${orgId}/keys`, page.getByRole('button', { name: 'Create key' }));
      expect(posts).toEqual([`/orgs/${orgId}/keys 303 /orgs/${orgId}/keys`, `/orgs/${orgId}/keys 303 /orgs/${orgId}/keys`]);
      const keys = await env.db('api_keys').where({ organization_id: orgId });
      expect(keys).toHaveLength(1);
      expect(await page.content()).not.toContain('nothing new was made');
      const key = (await page.locator('#new-key').textContent())!.trim();
      expect(hashApiKey(key)).toBe(keys[0].hash);
      // Shown to the page the browser kept: a reload now shows it no more.
      await page.reload();
      expect(await page.locator('#new-key').count()).toBe(0);
      expect(await page.content()).not.toContain(key);
    });
  });

  it('when an admin presses Enter on "Create invitation" again as the members page loads, then one invitation is made and the page shows its link', async () => {
    await asNewAdmin('Invitation repeat across redirect test', '/orgs/:org/members', async (page, orgId) => {
      await page.getByLabel('E-mail').fill(uniqueEmail('invited'));
      const posts = await enterTwiceAcrossTheRedirect(page, `/orgs/${orgId}/members`, page.getByRole('button', { name: 'Create invitation' }));
      expect(posts).toEqual([`/orgs/${orgId}/members/invite 303 /orgs/${orgId}/members`, `/orgs/${orgId}/members/invite 303 /orgs/${orgId}/members`]);
      const invitations = await env.db('invitations').where({ organization_id: orgId });
      expect(invitations).toHaveLength(1);
      const link = (await page.locator('#invite-link').textContent())!.trim();
      expect(hashToken(link.split('/').pop()!)).toBe(invitations[0].token_hash);
    });
  });
});
