import { describe, expect, it } from 'vitest';
import { guideLinkTarget } from './getting-started-guide.js';
import { headingSlug, renderMarkdown } from './render-markdown.js';

const render = (markdown: string, reservedIds?: string[]) => renderMarkdown(markdown, { link: guideLinkTarget, reservedIds }).html;

describe('renderMarkdown', () => {
  it('when the Markdown holds raw HTML then it shows as text, in every place text goes', () => {
    const html = render(
      [
        '# Title <img src=x onerror=alert(1)>',
        '',
        '<script>alert(1)</script>',
        '',
        '- an item <b onclick="x()">bold</b>',
        '',
        '| a | b |',
        '|---|---|',
        '| <iframe src="//evil"></iframe> | `<script>` |',
        '',
        '```html',
        '<script>alert(2)</script>',
        '```',
        '',
        '[<svg onload=alert(3)>](#title) and **<em>x</em>**',
      ].join('\n'),
    );
    expect(html).not.toMatch(/<(script|img|b |iframe|svg|em>x)/);
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(html).toContain('<a href="#title">&#60;svg onload=alert(3)&#62;</a>');
  });

  it('when a link points anywhere but an anchor, a guide or http(s) then its text stays, without the link', () => {
    const html = render('[a](javascript:alert(1)) [b](api.md) [c](mcp.md#tools) [d](data:text/html,x) [e](../README.md)');
    expect(html).toBe('<p>a b c d e</p>\n');
  });

  it('when a link goes to a guide then it goes to that guide\'s page, its anchor kept; an http(s) link with a quote cannot break out of its attribute', () => {
    expect(render('[it](getting-started.it.md) [en](getting-started.md#6-errors) [x](https://example.com/"onmouseover=alert(1))')).toBe(
      '<p><a href="/docs/getting-started?lang=it">it</a> <a href="/docs/getting-started?lang=en#6-errors">en</a> ' +
        '<a href="https://example.com/&#34;onmouseover=alert(1)">x</a></p>\n',
    );
  });

  it('when headings repeat or take a page id then each gets an id of its own, as GitHub names them', () => {
    expect(headingSlug("7. Usage and billing")).toBe('7-usage-and-billing');
    expect(headingSlug("Primi passi con l'API: più `veloce`")).toBe('primi-passi-con-lapi-più-veloce');
    const html = render('## Errors\n\n## Errors\n\n### `Top`\n\n# Guide', ['top', 'guide']);
    expect([...html.matchAll(/<h\d id="([^"]+)"/g)].map((m) => m[1])).toEqual(['errors', 'errors-1', 'top-1', 'guide-1']);
    expect(renderMarkdown('Intro\n\n# The *title*\n\n# Another', { link: () => undefined }).title).toBe('The title');
  });

  it('when the guide uses its constructs then each renders: lists running over indented lines, tables, code, emphasis', () => {
    const markdown = [
      'A paragraph',
      'on two lines with `a | b` and *emphasis*, **strong `code`**, a \\* star.',
      '1. one',
      '   continued',
      '2. two',
      '',
      '- bullet',
      '',
      '| Status | `code` |',
      '|---|---|',
      '| 401 | `a\\|b` or a\\|b |',
      '```sh',
      'curl "$BASE_URL" # <not a tag>',
      '```',
    ].join('\n');
    expect(render(markdown)).toBe(
      [
        '<p>A paragraph',
        'on two lines with <code>a | b</code> and <em>emphasis</em>, <strong>strong <code>code</code></strong>, a * star.</p>',
        '<ol>',
        '<li>one\ncontinued</li>',
        '<li>two</li>',
        '</ol>',
        '<ul>',
        '<li>bullet</li>',
        '</ul>',
        '<table>',
        '<thead><tr><th>Status</th><th><code>code</code></th></tr></thead>',
        '<tbody>',
        '<tr><td>401</td><td><code>a|b</code> or a|b</td></tr>',
        '</tbody>',
        '</table>',
        '<pre><code class="language-sh">curl &#34;$BASE_URL&#34; # &#60;not a tag&#62;',
        '</code></pre>',
        '',
      ].join('\n'),
    );
  });
});
