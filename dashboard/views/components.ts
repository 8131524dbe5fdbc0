import type { DashboardState } from '../state.js';
import { html, raw, type Html, type HtmlValue } from './html.js';

export function csrfField(state: DashboardState): Html {
  return html`<input type="hidden" name="_csrf" value="${state.csrfToken}">`;
}

export type Tone = 'neutral' | 'good' | 'warn' | 'bad' | 'info';

export function badge(text: string, tone: Tone = 'neutral'): Html {
  return html`<span class="badge badge-${tone}">${text}</span>`;
}

export function notice(text: HtmlValue, tone: Tone = 'info'): Html {
  const role = tone === 'bad' || tone === 'warn' ? 'alert' : 'status';
  return html`<div class="notice notice-${tone}" role="${role}">${text}</div>`;
}

export function stat(label: string, value: HtmlValue, sub?: HtmlValue): Html {
  return html`<div class="stat"><div class="stat-label">${label}</div><div class="stat-value">${value}</div>${sub ? html`<div class="stat-sub">${sub}</div>` : ''}</div>`;
}

/** A table with a caption for screen readers; `numeric` columns align right; `rowHeaders`: each
 * row's first cell names the row (a figure's label, as the report's balance lists them), so a
 * screen reader reads it with each figure of the row. */
export function table(options: { caption: string; headers: string[]; rows: HtmlValue[][]; numeric?: number[]; empty: string; captionVisible?: boolean; rowHeaders?: boolean }): Html {
  if (options.rows.length === 0) return html`<p class="empty">${options.empty}</p>`;
  const cls = (i: number) => (options.numeric?.includes(i) ? ' class="num"' : '');
  const cell = (c: HtmlValue, i: number) => (i === 0 && options.rowHeaders ? html`<th scope="row">${c}</th>` : html`<td${raw(cls(i))}>${c}</td>`);
  return html`<div class="table-wrap"><table>
    <caption class="${options.captionVisible ? '' : 'visually-hidden'}">${options.caption}</caption>
    <thead><tr>${options.headers.map((h, i) => html`<th scope="col"${raw(cls(i))}>${h}</th>`)}</tr></thead>
    <tbody>${options.rows.map((r) => html`<tr>${r.map(cell)}</tr>`)}</tbody>
  </table></div>`;
}

let fieldCounter = 0;

/** Why a refused form's field was refused, under it; its input points here (fieldAttributes). */
export function fieldError(id: string, error: string | Html | undefined): Html | '' {
  return error ? html`<p class="field-error" id="${id}-error">${error}</p>` : '';
}

/** aria-invalid and aria-describedby of an input with help text and, when refused, its error. */
export function fieldAttributes(id: string, options: { help?: boolean; error?: string | Html; refusedBy?: string }): Html {
  const describedBy = [options.help ? `${id}-help` : '', options.error ? `${id}-error` : '', options.refusedBy ?? ''].filter(Boolean).join(' ');
  return html`${options.error || options.refusedBy ? raw(' aria-invalid="true"') : ''}${describedBy ? html` aria-describedby="${describedBy}"` : ''}`;
}

/** A labelled input with optional help text and, when its form was refused, why. */
export function field(options: {
  label: string;
  name: string;
  type?: string;
  value?: string | number | null;
  help?: string;
  required?: boolean;
  autocomplete?: string;
  /** A number, or a date (YYYY-MM-DD) for a date field. */
  min?: number | string;
  max?: number;
  /** The keyboard a phone shows ('numeric': digits), for a text field that takes a number as typed. */
  inputmode?: 'numeric';
  placeholder?: string;
  id?: string;
  readonly?: boolean;
  /** The refusal of what was typed here, in the page's language (markup: with a link). */
  error?: string | Html;
  /** The id of a refusal said once for several fields (the sign-in's vague "e-mail or password"): marked invalid, described by it. */
  refusedBy?: string;
}): Html {
  const id = options.id ?? `f-${options.name}-${(fieldCounter = (fieldCounter + 1) % 1_000_000)}`;
  const helpId = `${id}-help`;
  return html`<div class="field">
    <label for="${id}">${options.label}</label>
    <input id="${id}" name="${options.name}" type="${options.type ?? 'text'}"${options.value !== undefined && options.value !== null ? html` value="${String(options.value)}"` : ''}${options.required ? raw(' required') : ''}${options.readonly ? raw(' readonly') : ''}${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ''}${options.min !== undefined ? html` min="${options.min}"` : ''}${options.max !== undefined ? html` max="${options.max}"` : ''}${options.inputmode ? html` inputmode="${options.inputmode}"` : ''}${options.placeholder ? html` placeholder="${options.placeholder}"` : ''}${fieldAttributes(id, { help: !!options.help, error: options.error, refusedBy: options.refusedBy })}>
    ${fieldError(id, options.error)}
    ${options.help ? html`<p class="help" id="${helpId}">${options.help}</p>` : ''}
  </div>`;
}

/** A labelled choice; `error`, as a field's: a value sent that is not one of the choices (a hand-made request). */
export function select(options: { label: string; name: string; choices: { value: string; label: string }[]; value?: string | null; id?: string; help?: string; error?: string }): Html {
  const id = options.id ?? `s-${options.name}-${(fieldCounter = (fieldCounter + 1) % 1_000_000)}`;
  return html`<div class="field">
    <label for="${id}">${options.label}</label>
    <select id="${id}" name="${options.name}"${fieldAttributes(id, { help: !!options.help, error: options.error })}>
      ${options.choices.map((c) => html`<option value="${c.value}"${c.value === (options.value ?? '') ? raw(' selected') : ''}>${c.label}</option>`)}
    </select>
    ${fieldError(id, options.error)}
    ${options.help ? html`<p class="help" id="${id}-help">${options.help}</p>` : ''}
  </div>`;
}

/**
 * A Copy button for the text of the element `target`, and beside it the status region in which
 * the page's script says "Copied" once it has copied (assets/app-js.ts): a live region that is
 * on the page before it changes, so screen readers announce the change, as they do not
 * announce a button whose label changes.
 */
export function copyButton(state: DashboardState, target: string, options: { label?: string; tone?: 'primary' | 'secondary' } = {}): Html {
  return html`<button type="button" class="btn btn-${options.tone ?? 'primary'}" data-copy="${target}" data-copied="${state.t('common.copied')}">${options.label ?? state.t('common.copy')}</button><span class="copy-status" id="${target}-copied" role="status" aria-live="polite"></span>`;
}

/** A one-button POST form (revoke, remove, sign out): a real form, so it works without JS. */
export function postButton(state: DashboardState, action: string, label: string, options: { tone?: 'danger' | 'secondary' | 'primary'; confirm?: string; fields?: Record<string, string> } = {}): Html {
  return html`<form method="post" action="${action}" class="inline"${options.confirm ? html` data-confirm="${options.confirm}"` : ''}>
    ${csrfField(state)}${Object.entries(options.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
    <button type="submit" class="btn btn-${options.tone ?? 'secondary'}">${label}</button>
  </form>`;
}

export function section(title: string, body: HtmlValue, options: { id?: string; actions?: HtmlValue; intro?: string } = {}): Html {
  const id = options.id ?? `sec-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return html`<section class="card" id="${id}" aria-labelledby="${id}-title">
    <div class="card-head"><h2 id="${id}-title">${title}</h2>${options.actions ?? ''}</div>
    ${options.intro ? html`<p class="muted">${options.intro}</p>` : ''}
    ${body}
  </section>`;
}

export function asOfStamp(state: DashboardState, asOf: Date | string | null): Html {
  const { t, f } = state;
  const text = asOf ? t('common.asOf', { time: f.dateTime(new Date(asOf)) }) : t('common.asOfNone');
  return html`<p class="as-of" title="${t('common.asOfHelp')}"><span aria-hidden="true">◷</span> ${text}</p>`;
}

const pageOfMessage = { rows: 'common.pageOf', keys: 'common.pageOfKeys', organizations: 'common.pageOfOrganizations', deliveries: 'common.pageOfDeliveries' } as const;

/** What a pager counts ("Page 1 of 3 · 120 deliveries"). */
export type PageCounting = keyof typeof pageOfMessage;

/** Previous / "page N of M" / next, under a paged table (the ledger, the activity log, the keys,
 * the organizations, the webhook deliveries), counting what the table lists. */
export function pagination(state: DashboardState, result: { page: number; pages: number; total: number; more?: boolean }, link: (page: number) => string, counting: PageCounting = 'rows'): Html {
  const { t, f } = state;
  // `more`: the total is a lower bound (a count that stopped, see ledgerPage), so no page count.
  const where = result.more
    ? t('common.pageOfMore', { page: f.number(result.page), total: f.number(result.total) })
    : t(pageOfMessage[counting], { page: result.page, pages: result.pages, total: f.number(result.total), count: result.total });
  return html`<nav class="pagination" aria-label="${where}">
    ${result.page > 1 ? html`<a class="btn btn-secondary" rel="prev" href="${link(result.page - 1)}">← ${t('common.previous')}</a>` : html`<span></span>`}
    <span class="muted">${where}</span>
    ${result.page < result.pages ? html`<a class="btn btn-secondary" rel="next" href="${link(result.page + 1)}">${t('common.next')} →</a>` : html`<span></span>`}
  </nav>`;
}
