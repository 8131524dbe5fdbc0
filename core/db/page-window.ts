/**
 * Which rows a numbered page holds (the ledger and activity pages): the requested page, kept
 * within 1..pages (past the end: the last page; not a whole number: the first), how many pages
 * `total` rows make, and the offset of the page's first row.
 */
export function pageWindow(total: number, requested: number | undefined, pageSize: number): { page: number; pages: number; offset: number } {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const page = Math.min(Math.max(1, requested !== undefined && Number.isSafeInteger(requested) ? requested : 1), pages);
  return { page, pages, offset: (page - 1) * pageSize };
}
