// A Markdown renderer for our own guide (docs/getting-started*.md), not for Markdown at large.
// The guide uses a handful of constructs: ATX headings, paragraphs, flat ordered and bullet
// lists, pipe tables, fenced code, and inline code, **strong**, *emphasis* and [links](…). This
// covers exactly those in ~150 lines rather than adding a dependency (and its updates) to the
// API for one page; test/getting-started-page.test.ts fails if either guide ever uses a
// construct this does not render (Markdown syntax left in the page's text).
//
// Everything that is not one of those constructs is text: it is HTML-escaped, raw HTML
// included, so a `<script>` in the Markdown shows as typed and never runs. Link targets go
// through the caller's `link`, which says where each may point (or that it is plain text).

export interface MarkdownOptions {
  /** The href a link's target becomes, or undefined to show the link's text without a link. */
  link(target: string): string | undefined;
  /** Element ids the page around the Markdown already uses: a heading's id never takes one. */
  reservedIds?: readonly string[];
}

export interface RenderedMarkdown {
  html: string;
  /** The text of the first level-1 heading ('' without one): the page's title. */
  title: string;
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** GitHub's heading anchors, so a `#…` link works on the served page as in the repository:
 * lower case, punctuation dropped, spaces as hyphens ("7. Usage and billing" → 7-usage-and-billing). */
export function headingSlug(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

const fenceOpen = /^```([\w-]*)\s*$/;
const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const listItem = /^(\d+\.|[-*+])\s+(.*)$/;
const tableDivider = /^\|?(\s*:?-+:?\s*\|)+\s*:?-*:?\s*$/;

export function renderMarkdown(markdown: string, options: MarkdownOptions): RenderedMarkdown {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  const usedIds = new Map<string, number>((options.reservedIds ?? []).map((id) => [id, 1]));
  let title = '';
  const inline = (text: string) => renderInline(text, options);
  const startsBlock = (line: string, next: string | undefined) =>
    fenceOpen.test(line) || heading.test(line) || listItem.test(line) || (line.startsWith('|') && next !== undefined && tableDivider.test(next));

  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }

    const fence = fenceOpen.exec(line);
    if (fence) {
      const body: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
      i++; // the closing fence (or the end of an unclosed block)
      const lang = fence[1] ? ` class="language-${escapeHtml(fence[1])}"` : '';
      out.push(`<pre><code${lang}>${escapeHtml(body.join('\n'))}\n</code></pre>`);
      continue;
    }

    const head = heading.exec(line);
    if (head) {
      const level = head[1]!.length;
      const text = plainText(head[2]!);
      const slug = headingSlug(text);
      const seen = usedIds.get(slug) ?? 0;
      usedIds.set(slug, seen + 1);
      const id = seen === 0 ? slug : `${slug}-${seen}`;
      if (level === 1 && !title) title = text;
      out.push(`<h${level} id="${escapeHtml(id)}">${inline(head[2]!)}</h${level}>`);
      i++;
      continue;
    }

    if (line.startsWith('|') && tableDivider.test(lines[i + 1] ?? '')) {
      const header = tableCells(line);
      const rows: string[][] = [];
      for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i++) rows.push(tableCells(lines[i]!));
      const cells = (row: string[], tag: 'th' | 'td') => row.map((cell) => `<${tag}>${inline(cell)}</${tag}>`).join('');
      out.push(`<table>\n<thead><tr>${cells(header, 'th')}</tr></thead>\n<tbody>\n${rows.map((row) => `<tr>${cells(row, 'td')}</tr>`).join('\n')}\n</tbody>\n</table>`);
      continue;
    }

    const item = listItem.exec(line);
    if (item) {
      const ordered = /\d/.test(item[1]![0]!);
      const start = ordered ? Number.parseInt(item[1]!, 10) : 1;
      const items: string[] = [];
      // An item runs on over its indented lines; a blank line or a line of another kind ends the list.
      while (i < lines.length) {
        const m = listItem.exec(lines[i]!);
        if (!m || /\d/.test(m[1]![0]!) !== ordered) break;
        const text = [m[2]!];
        for (i++; i < lines.length && /^\s+\S/.test(lines[i]!); i++) text.push(lines[i]!.trim());
        items.push(`<li>${inline(text.join('\n'))}</li>`);
      }
      const tag = ordered ? 'ol' : 'ul';
      out.push(`<${tag}${ordered && start !== 1 ? ` start="${start}"` : ''}>\n${items.join('\n')}\n</${tag}>`);
      continue;
    }

    const paragraph: string[] = [];
    for (; i < lines.length && lines[i]!.trim() !== '' && (paragraph.length === 0 || !startsBlock(lines[i]!, lines[i + 1])); i++) paragraph.push(lines[i]!);
    out.push(`<p>${inline(paragraph.join('\n'))}</p>`);
  }
  return { html: `${out.join('\n')}\n`, title };
}

/** A table row's cells: split on the pipes that are not escaped (`\|`) and not inside code. */
function tableCells(row: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let inCode = false;
  const body = row.trim().replace(/^\|/, '').replace(/\|$/, '');
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && body[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (c === '`') {
      inCode = !inCode;
      cell += c;
    } else if (c === '|' && !inCode) {
      cells.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  cells.push(cell.trim());
  return cells;
}

// One pass, leftmost match first; at one position a backslash escape, then a code span, a link
// (its target may hold one level of parentheses, as in CommonMark), strong, emphasis. Text between matches, and inside code, is escaped.
const inlineToken = /\\([\\`*_{}[\]()#+\-.!|<>])|(`+)([\s\S]*?[^`])\2(?!`)|\[([^\]]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)|\*\*(?=\S)([\s\S]*?\S)\*\*|\*(?=[^\s*])([\s\S]*?[^\s*])\*/g;

function renderInline(text: string, options: MarkdownOptions): string {
  let html = '';
  let last = 0;
  for (const m of text.matchAll(inlineToken)) {
    html += escapeHtml(text.slice(last, m.index));
    last = m.index + m[0].length;
    const [, escaped, , code, linkText, target, strong, em] = m;
    if (escaped !== undefined) html += escapeHtml(escaped);
    else if (code !== undefined) html += `<code>${escapeHtml(code.trim() === '' ? code : code.replace(/^ (.*) $/s, '$1'))}</code>`;
    else if (linkText !== undefined) {
      const href = options.link(target!);
      html += href === undefined ? renderInline(linkText, options) : `<a href="${escapeHtml(href)}">${renderInline(linkText, options)}</a>`;
    } else if (strong !== undefined) html += `<strong>${renderInline(strong, options)}</strong>`;
    else if (em !== undefined) html += `<em>${renderInline(em, options)}</em>`;
  }
  return html + escapeHtml(text.slice(last));
}

/** A heading's text as it reads: code, emphasis and links without their syntax. */
function plainText(text: string): string {
  return text.replace(inlineToken, (...m: (string | undefined)[]) => m[1] ?? m[3] ?? m[4] ?? m[6] ?? m[7] ?? '');
}
