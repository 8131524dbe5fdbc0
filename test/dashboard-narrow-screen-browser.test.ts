import { existsSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { applyUsage, browserForFile, chromiumPath, createMember, createOperator, dashboardForFile, signInInBrowser, usageEventFor } from './dashboard-fixtures.js';

// The dashboard on a phone (375 x 667 CSS pixels), in English and in Italian, in Debian's headless
// Chromium: no page scrolls sideways, a control focused from the keyboard is never hidden under
// the top bar (WCAG 2.4.11), and the greyed and link texts reach 4.5:1 against what is behind
// them (WCAG 1.4.3), as found by an accessibility review.

const haveBrowser = existsSync(chromiumPath);
const phone = { width: 375, height: 667 };

// The texts the review measured below 4.5:1: muted texts, links, the active side bar entry, the
// tab counts and the operator list's codes. Each is checked with every text inside it.
const checkedTexts = [
  '.sidebar li a.active', '.muted', '.as-of', '.help', 'p.empty', '.who', 'main a:not(.btn)', '.lang a',
  'nav.tabs > a.tab > span.muted', 'td > div.muted.small > code',
].join(', ');

// Run in the page (strings: this file is type-checked without the DOM's types): the background
// behind an element, each ancestor's background blended over the one below (alpha) down to the
// white canvas, and the WCAG 2.x contrast ratio of two colours.
const colourHelpers = `
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null; const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, below) => { const a = top[3]; return [0, 1, 2].map((i) => top[i] * a + below[i] * (1 - a)).concat(1); };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor); if (c && c[3] > 0) layers.push(c); }
    return layers.reverse().reduce((below, top) => over(top, below), [255, 255, 255, 1]);
  };
  const luminance = (c) => { const [r, g, b] = c.slice(0, 3).map((v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const ratio = (a, b) => { const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x); return (l1 + 0.05) / (l2 + 0.05); };`;
// The colour of each visible text in `selector` against what is behind it; the lowest ten.
const lowestContrasts = (selector: string) => `(() => {${colourHelpers}
  const hasText = (e) => [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
  const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden' && !e.closest('.visually-hidden, .skip-link');
  const found = new Set();
  for (const root of document.querySelectorAll(${JSON.stringify(selector)})) for (const e of [root, ...root.querySelectorAll('*')]) if (hasText(e) && visible(e)) found.add(e);
  return [...found].map((e) => {
    const bg = background(e);
    const fg = over(parse(getComputedStyle(e).color), bg);
    return { text: e.textContent.trim().slice(0, 40), tag: e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : ''), color: getComputedStyle(e).color, background: 'rgb(' + bg.slice(0, 3).map(Math.round).join(', ') + ')', ratio: Math.round(ratio(fg, bg) * 100) / 100 };
  }).sort((a, b) => a.ratio - b.ratio).slice(0, 10);
})()`;

const pageWidths = `({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })`;

describe.skipIf(!haveBrowser)('the dashboard on a phone', () => {
  const env = dashboardForFile();
  const chromium = browserForFile();

  /** A browser at phone size, signed in as `person`, in `lang`; closed however `use` ends. */
  async function asPerson(person: { email: string; password: string }, lang: 'en' | 'it', use: (page: Page) => Promise<void>): Promise<void> {
    const context: BrowserContext = await chromium.browser.newContext({ viewport: phone });
    try {
      const page = await context.newPage();
      await signInInBrowser(page, env.dashboard.url, person.email, person.password);
      await context.addCookies([{ name: 'dash_lang', value: lang, url: env.dashboard.url }]);
      await use(page);
    } finally {
      await context.close();
    }
  }

  /**
   * An organization with a second member (the members table's role form) and 50 credits used
   * today in its ledger (ten calls of 5): a day's column that an axis topped at 50 would tick in 12.5s.
   */
  async function organizationInUse(name: string) {
    const { id: orgId } = await createOrganization(env.db, { name, planId: 'standard' });
    const admin = await createMember(env.db, orgId, 'admin');
    const finance = await createMember(env.db, orgId, 'finance');
    await applyUsage(env.db, Array.from({ length: 10 }, () => usageEventFor(orgId)));
    return { orgId, admin, finance };
  }

  /** What is wrong with the page at `path` on a phone: its sideways scroll and its texts under 4.5:1. */
  async function faultsOf(page: Page, path: string): Promise<string[]> {
    await page.goto(env.dashboard.url + path);
    const faults: string[] = [];
    const { scrollWidth, clientWidth } = await page.evaluate<{ scrollWidth: number; clientWidth: number }>(pageWidths);
    if (scrollWidth > clientWidth) faults.push(`${path}: scrolls sideways (scrollWidth ${scrollWidth} > clientWidth ${clientWidth})`);
    const texts = await page.evaluate<{ text: string; tag: string; color: string; background: string; ratio: number }[]>(lowestContrasts(checkedTexts));
    for (const t of texts.filter((x) => x.ratio < 4.5)) faults.push(`${path}: "${t.text}" (${t.tag}) ${t.color} on ${t.background} is ${t.ratio}:1`);
    return faults;
  }

  for (const lang of ['en', 'it'] as const) {
    it(`when an admin, a finance member and an operator open their pages in ${lang === 'en' ? 'English' : 'Italian'} on a phone, then none scrolls sideways and the muted texts and links reach 4.5:1`, async () => {
      const { orgId, admin, finance } = await organizationInUse(`Phone pages test ${lang}`);
      const operator = await createOperator(env.db);
      const faults: string[] = [];
      await asPerson(admin, lang, async (page) => {
        for (const sub of ['', '/keys', '/usage', '/report', '/ledger', '/members', '/alerts', '/activity']) faults.push(...await faultsOf(page, `/orgs/${orgId}${sub}`));
        faults.push(...await faultsOf(page, '/orgs'), ...await faultsOf(page, '/account/password'));
      });
      await asPerson(finance, lang, async (page) => {
        for (const sub of ['', '/usage', '/report', '/ledger']) faults.push(...await faultsOf(page, `/orgs/${orgId}${sub}`));
      });
      await asPerson(operator, lang, async (page) => {
        faults.push(...await faultsOf(page, '/operator'), ...await faultsOf(page, `/operator/organizations/${orgId}`));
      });
      expect(faults).toEqual([]);
    });
  }

  // The focused field's ring against the card around it: at least 3:1 (WCAG 1.4.11), and solid.
  const focusRing = `(() => {${colourHelpers}
    const e = document.activeElement;
    const style = getComputedStyle(e);
    const behind = background(e.parentElement);
    return { style: style.outlineStyle, width: parseFloat(style.outlineWidth), ratio: Math.round(ratio(over(parse(style.outlineColor), behind), behind) * 100) / 100 };
  })()`;

  for (const lang of ['en', 'it'] as const) {
    it(`when a field of a card has the focus on a phone in ${lang === 'en' ? 'English' : 'Italian'}, then its ring is solid, 2 pixels or more, and 3:1 against the card`, async () => {
      const { orgId, admin } = await organizationInUse(`Phone focus ring test ${lang}`);
      await asPerson(admin, lang, async (page) => {
        await page.goto(`${env.dashboard.url}/orgs/${orgId}/keys`);
        await page.focus('main .card input[name=name]');
        const ring = await page.evaluate<{ style: string; width: number; ratio: number }>(focusRing);
        expect({ style: ring.style, wide: ring.width >= 2, contrasting: ring.ratio >= 3, ratio: ring.ratio }).toEqual({ style: 'solid', wide: true, contrasting: true, ratio: ring.ratio });
      });
    });
  }

  for (const lang of ['en', 'it'] as const) {
    it(`when the usage chart is shown on a phone in ${lang === 'en' ? 'English' : 'Italian'}, then its axis text is at least 9 pixels high and whole credits are ticked in whole numbers`, async () => {
      const { orgId, admin } = await organizationInUse(`Phone chart test ${lang}`);
      await asPerson(admin, lang, async (page) => {
        await page.goto(`${env.dashboard.url}/orgs/${orgId}/usage`);
        const axis = await page.evaluate<{ text: string; height: number }[]>(`[...document.querySelectorAll('.chart text.axis')].map((t) => ({ text: t.textContent, height: t.getBoundingClientRect().height }))`);
        expect(axis.length).toBeGreaterThan(5);
        expect(axis.filter((t) => t.height < 9)).toEqual([]);
        // The vertical axis's five labels (anchored at their end), 0 to the top: none with a
        // decimal part (12.5, 12,5).
        const ticks = await page.evaluate<string[]>(`[...document.querySelectorAll('.chart text.axis[text-anchor=end]')].map((t) => t.textContent)`);
        expect(ticks).toHaveLength(5);
        expect(ticks.filter((t) => /[.,]\d{1,2}$/.test(t))).toEqual([]);
        expect(await page.evaluate<number>(`document.documentElement.scrollWidth - document.documentElement.clientWidth`)).toBeLessThanOrEqual(0);
      });
    });
  }

  // Shift+Tab back from the end of a long page, control by control, as the review did: the browser
  // scrolls a control into view only when it is off screen, so one just under the top bar stays
  // there, focused and unseen. Each control focused on the way must be clear of the top bar.
  const focusedUnderTopBar = `(() => {
    const el = document.activeElement;
    const bar = document.querySelector('header.topbar');
    if (!el || bar.contains(el)) return null;
    const r = el.getBoundingClientRect();
    const b = bar.getBoundingClientRect();
    return r.top < b.bottom && r.bottom > b.top ? (el.id ? '#' + el.id : el.tagName.toLowerCase() + ' ' + el.textContent.trim().slice(0, 30)) + ' at ' + Math.round(r.top) + '-' + Math.round(r.bottom) + ' under the top bar at ' + Math.round(b.top) + '-' + Math.round(b.bottom) : null;
  })()`;
  const focusLastControl = `(() => {
    window.scrollTo(0, document.documentElement.scrollHeight);
    const controls = [...document.querySelectorAll('a[href], button, select, input:not([type=hidden]), textarea, summary')].filter((e) => e.getClientRects().length > 0);
    controls[controls.length - 1].focus({ preventScroll: true });
  })()`;

  for (const lang of ['en', 'it'] as const) {
    it(`when a person Shift+Tabs back from the end of the ledger and the report on a phone, or onto a picker on a wider screen, in ${lang === 'en' ? 'English' : 'Italian'}, then no focused control is under the top bar, the period pickers and Show among them`, async () => {
      const { orgId, admin } = await organizationInUse(`Phone focus test ${lang}`);
      await asPerson(admin, lang, async (page) => {
        for (const [sub, targets] of [['/ledger', ['#ledger-period']], ['/report', ['#period', 'form.toolbar button[type=submit]']]] as const) {
          await page.goto(`${env.dashboard.url}/orgs/${orgId}${sub}`);
          await page.evaluate(focusLastControl);
          const hidden: string[] = [];
          const reached = new Set<string>();
          for (let step = 0; step < 200 && reached.size < targets.length; step++) {
            await page.keyboard.press('Shift+Tab');
            const under = await page.evaluate<string | null>(focusedUnderTopBar);
            if (under) hidden.push(under);
            for (const target of targets) if (await page.evaluate<boolean>(`document.activeElement === document.querySelector(${JSON.stringify(target)})`)) reached.add(target);
          }
          expect({ page: sub, reached: [...reached].sort(), hidden }).toEqual({ page: sub, reached: [...targets].sort(), hidden: [] });
        }
        // And each picker when it is just off the top of the screen as Shift+Tab reaches it: the
        // browser scrolls it only as far as the screen's top edge, where a sticky top bar is. On
        // a phone, and on a wider screen where the bar stays on top (two lines high in Italian).
        const pickers = [['/ledger', '#ledger-period', '#ledger-type'], ['/report', '#period', 'form.toolbar button[type=submit]'], ['/report', 'form.toolbar button[type=submit]', '.toolbar-row > a.btn']] as const;
        for (const [viewport, [sub, target, next]] of [phone, { width: 1160, height: 600 }].flatMap((v) => pickers.map((p) => [v, p] as const))) {
          await page.setViewportSize(viewport);
          await page.goto(`${env.dashboard.url}/orgs/${orgId}${sub}`);
          await page.evaluate(`(() => {
            const r = document.querySelector(${JSON.stringify(target)}).getBoundingClientRect();
            window.scrollTo(0, window.scrollY + r.top + r.height / 2);
            document.querySelector(${JSON.stringify(next)}).focus({ preventScroll: true });
          })()`);
          await page.keyboard.press('Shift+Tab');
          expect(await page.evaluate<boolean>(`document.activeElement === document.querySelector(${JSON.stringify(target)})`)).toBe(true);
          expect({ width: viewport.width, page: sub, target, hidden: await page.evaluate<string | null>(focusedUnderTopBar) }).toEqual({ width: viewport.width, page: sub, target, hidden: null });
        }
      });
    });
  }
});
