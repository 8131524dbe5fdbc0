import type { LedgerPage, LedgerPosition } from '../../core/finance/index.js';
import { html, type Html } from './html.js';
import type { DashboardState } from '../state.js';
import { pagination, type PageCounting } from './components.js';

/** Where a row-cursor pager's links lead: a numbered page, or the rows older or newer than a row, or the oldest. */
export type RowPagerTarget = { page: number } | { older: string } | { newer: string } | { oldest: true };

/** A page of a table paged by number as far as its count goes, and past it by row: what
 * `ledgerPage` returns, its rows aside. */
export type RowPaged = Omit<LedgerPage, 'rows'>;

/**
 * The ledger's pager, for tables too long to count to the end. Within the count it is the
 * numbered pager (`pagination`), its Previous and Next by row (`cursorPager`); where the count
 * stops ("more than 100,000 rows") the pages are still numbered as far as it goes, Previous and
 * Next by row, past it a page reached by row has no number, and every page links to the newest
 * and oldest pages: every row is a bounded number of links from the first page.
 */
export function rowPager(state: DashboardState, result: RowPaged, link: (to: RowPagerTarget) => string): Html {
  const { t, f } = state;
  if (result.page !== null && !result.more) return cursorPager(state, { ...result, page: result.page }, link, 'rows');
  const numbered = result.page;
  const where = numbered !== null
    ? t('common.pageOfMore', { page: f.number(numbered), total: f.number(result.total) })
    : `${t(result.older === null ? 'common.pageOldest' : 'common.pageByRow')} · ${result.more ? t('common.moreThanRows', { total: f.number(result.total) }) : t('common.rowCount', { total: f.number(result.total), count: result.total })}`;
  // As `cursorPager`: from the page's first row (a read that reaches the newest row is page 1).
  const previous = numbered !== null
    ? (numbered > 1 ? link(result.newer === null ? { page: numbered - 1 } : { newer: result.newer }) : null)
    : (result.newer === null ? null : link({ newer: result.newer }));
  const next = result.older === null ? null : link({ older: result.older });
  return html`<nav class="pagination" aria-label="${where}">
    ${previous ? html`<a class="btn btn-secondary" rel="prev" href="${previous}">← ${t('common.previous')}</a>` : html`<span></span>`}
    <span class="muted">${where}</span>
    ${next ? html`<a class="btn btn-secondary" rel="next" href="${next}">${t('common.next')} →</a>` : html`<span></span>`}
  </nav>
  <p class="pagination-ends small">${numbered === 1 ? '' : html`<a data-page="newest" href="${link({ page: 1 })}">⇤ ${t('common.newest')}</a>`}${numbered === 1 || result.older === null ? '' : ' · '}${result.older === null ? '' : html`<a data-page="oldest" href="${link({ oldest: true })}">${t('common.oldest')} ⇥</a>`}</p>`;
}

/**
 * The numbered pager (`pagination`) of a table counted to the end whose Previous and Next go by
 * row: from the first row of the page to the newer ones, from its last to the older ones, so rows
 * written meanwhile shift no page (by number, a new row pushes a page's last row onto the next,
 * listed twice) and none is skipped (Previous from page 2 by number, to page 1, skipped the rows
 * written meanwhile beyond a page's worth; by row, it reaches page 1 only when nothing is left
 * between, `keysetRows`). The webhook delivery log's, the keys page's and the activity page's,
 * which number every page, and the ledger's within its count (`rowPager`).
 */
export function cursorPager(state: DashboardState, result: { page: number; pages: number; total: number; older: string | null; newer: string | null }, link: (to: RowPagerTarget) => string, counting: PageCounting): Html {
  return pagination(state, result, (page) => {
    if (page > result.page) return link(result.older === null ? { page } : { older: result.older });
    return link(result.newer === null ? { page } : { newer: result.newer });
  }, counting);
}

/** A pager link's query parameters: `page=N`, `older=<row>`, `newer=<row>` or `oldest=1`. */
export function rowPagerQuery(to: RowPagerTarget): Record<string, string> {
  if ('page' in to) return { page: String(to.page) };
  if ('older' in to) return { older: to.older };
  if ('newer' in to) return { newer: to.newer };
  return { oldest: '1' };
}

/** The position a request asks for (`rowPagerQuery`'s parameters; none, or a page not a number: the first page). */
export function rowPagerPosition(query: Record<string, unknown>): LedgerPosition {
  if (typeof query.older === 'string' && query.older) return { older: query.older };
  if (typeof query.newer === 'string' && query.newer) return { newer: query.newer };
  if (query.oldest === '1') return { oldest: true };
  return { page: Number.parseInt(String(query.page ?? '1'), 10) };
}
