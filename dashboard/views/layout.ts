import { can, type Capability, type MembershipSummary, type OrganizationRole } from '../../core/dashboard-auth/index.js';
import { languages } from '../i18n/translate.js';
import type { DashboardState } from '../state.js';
import { badge, csrfField } from './components.js';
import { html, type Html, type HtmlValue } from './html.js';

export type OrgNav = 'overview' | 'keys' | 'usage' | 'report' | 'ledger' | 'members' | 'alerts' | 'activity';

export interface PageOptions {
  title: string;
  body: HtmlValue;
  /** The organization being looked at, for the side navigation. */
  org?: { id: string; name: string; role: OrganizationRole };
  active?: OrgNav | 'operator' | 'orgs';
  /** The person's organizations (the switcher). */
  memberships?: MembershipSummary[];
  banners?: HtmlValue;
  /** The current URL (language links come back here). */
  path: string;
}

// An organization's pages, in the side bar's order, with what each needs of the role.
const orgPageList: { key: OrgNav; path: string; needs: Capability }[] = [
  { key: 'overview', path: '', needs: 'view_finance' },
  { key: 'keys', path: '/keys', needs: 'manage_keys' },
  { key: 'usage', path: '/usage', needs: 'view_finance' },
  { key: 'report', path: '/report', needs: 'view_finance' },
  { key: 'ledger', path: '/ledger', needs: 'view_finance' },
  { key: 'members', path: '/members', needs: 'manage_members' },
  { key: 'alerts', path: '/alerts', needs: 'view_finance' },
  { key: 'activity', path: '/activity', needs: 'view_activity' },
];

/** The pages of an organization its role lets the person open: the side bar's, and a refusal's. */
export function orgPages(state: DashboardState, org: { id: string; role: OrganizationRole }): { key: OrgNav; href: string; label: string }[] {
  return orgPageList.filter((p) => can(org.role, p.needs)).map((p) => ({ key: p.key, href: `/orgs/${org.id}${p.path}`, label: state.t(`nav.${p.key}`) }));
}

function languageSwitch(state: DashboardState, path: string): Html {
  return html`<nav class="lang" aria-label="${state.t('lang.label')}">
    ${languages.map((l) => (l === state.lang
      ? html`<span class="lang-current" aria-current="true" lang="${l}">${l.toUpperCase()}</span>`
      : html`<a href="/language?lang=${l}&amp;next=${encodeURIComponent(path)}" lang="${l}" hreflang="${l}" title="${state.t(`lang.${l}`)}">${l.toUpperCase()}</a>`))}
  </nav>`;
}

function head(state: DashboardState, title: string): Html {
  return html`<!doctype html>
<html lang="${state.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${state.t('app.name')}</title>
<link rel="stylesheet" href="/assets/app.css">
<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
<script src="/assets/app.js" defer></script>
</head>`;
}

const brand = (state: DashboardState) => html`<a class="brand" href="/"><span class="brand-mark" aria-hidden="true"></span>${state.t('app.name')}</a>`;

export function page(state: DashboardState, options: PageOptions): string {
  const { t } = state;
  const user = state.session?.user;
  const navItem = (href: string, key: OrgNav | 'operator' | 'orgs', label: string) =>
    html`<li><a href="${href}"${options.active === key ? html` aria-current="page" class="active"` : ''}>${label}</a></li>`;
  const org = options.org;
  const orgNav = org
    ? html`<div class="nav-group">
        <p class="nav-title">${org.name}</p>
        <ul>
          ${orgPages(state, org).map((p) => navItem(p.href, p.key, p.label))}
        </ul>
      </div>`
    : '';
  const others = (options.memberships ?? []).filter((m) => m.organizationId !== org?.id);
  const switcher = others.length > 0
    ? html`<div class="nav-group"><p class="nav-title">${t('nav.organizations')}</p><ul>${others.map((m) => html`<li><a href="/orgs/${m.organizationId}">${m.organizationName}</a></li>`)}</ul></div>`
    : '';
  const operatorNav = user?.isOperator
    ? html`<div class="nav-group"><p class="nav-title">${t('nav.operator')}</p><ul>${navItem('/operator', 'operator', t('operator.title'))}</ul></div>`
    : '';
  return html`${head(state, options.title)}
<body>
<a class="skip-link" href="#main">${t('nav.skip')}</a>
<div class="shell">
  <aside class="sidebar">
    ${brand(state)}
    <nav aria-label="${t('nav.main')}">${orgNav}${switcher}${operatorNav}</nav>
  </aside>
  <div class="main-col">
    <header class="topbar">
      <div class="crumbs">${org ? html`<span class="org-name">${org.name}</span> ${badge(t(`role.${org.role}`), 'info')}` : ''}</div>
      <div class="account">
        ${languageSwitch(state, options.path)}
        ${user ? html`<span class="who" title="${t('auth.signedInAs', { email: user.email })}">${user.email}</span>
        <a class="btn btn-ghost" href="/account/password">${t('account.changePassword')}</a>
        <form method="post" action="/sign-out" class="inline">${csrfField(state)}<button class="btn btn-ghost" type="submit">${t('auth.signOut')}</button></form>
        <form method="post" action="/sign-out-everywhere" class="inline">${csrfField(state)}<button class="btn btn-ghost" type="submit">${t('auth.signOutEverywhere')}</button></form>` : ''}
      </div>
    </header>
    <main id="main" tabindex="-1">
      ${options.banners ?? ''}
      <h1>${options.title}</h1>
      ${options.body}
    </main>
  </div>
</div>
</body>
</html>`.value;
}

/** Sign-in, invitations and errors before sign-in: one centred card. */
export function bareLayout(state: DashboardState, options: { title: string; body: HtmlValue; path: string }): string {
  return html`${head(state, options.title)}
<body class="bare">
<main id="main" class="bare-main">
  <div class="bare-top">${brand(state)}${languageSwitch(state, options.path)}</div>
  <div class="card bare-card">
    <h1>${options.title}</h1>
    ${options.body}
  </div>
  <p class="muted center">${state.t('app.tagline')}</p>
</main>
</body>
</html>`.value;
}
