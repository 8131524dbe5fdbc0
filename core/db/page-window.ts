/**
 * Which rows a numbered page holds (the ledger and activity pages): the requested page, kept
 * within 1..pages (past the end, however far: the last page; not a number: the first), how many pages
 * `total` rows make, and the offset of the page's first row.
 */
export function pageWindow(total: number, requested: number | undefined, pageSize: number): { page: number; pages: number; offset: number } {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const asked = requested === undefined || Number.isNaN(requested) ? 1 : requested;
  const page = Math.min(Math.max(1, Math.floor(asked)), pages);
  return { page, pages, offset: (page - 1) * pageSize };
}
