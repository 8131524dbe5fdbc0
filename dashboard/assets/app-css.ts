// The dashboard's whole stylesheet, served at /assets/app.css. Kept in a .ts module so the
// compiled build carries it without a copy step.
export const appCss = String.raw`
:root {
  --bg: #f6f8fa; --panel: #ffffff; --ink: #1a1f36; --ink-2: #3c4257; --muted: #5f6879; --line: #e3e8ee;
  --accent: #5851ea; --accent-ink: #ffffff; --accent-soft: #eef0ff; --focus: #0a66ff;
  --good: #0e6245; --good-bg: #cbf4c9; --warn: #983705; --warn-bg: #fcedb9; --bad: #a41c4e; --bad-bg: #ffe7f2; --info: #3d4eac; --info-bg: #e3e8ff;
  --radius: 8px; --shadow: 0 1px 1px rgba(0,0,0,.03), 0 2px 5px rgba(60,66,87,.08);
  font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Ubuntu, sans-serif;
  font-size: 15px; line-height: 1.5; color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 4px; }
code { font-family: "SFMono-Regular", Menlo, Consolas, monospace; font-size: .9em; background: #f2f4f7; padding: .1em .35em; border-radius: 4px; }
h1 { font-size: 1.75rem; margin: .25rem 0 1.25rem; letter-spacing: -.01em; }
h2 { font-size: 1.05rem; margin: 0; }
/* The usual clip pattern: 1px, clipped, no margin or border to push the page wider. */
.visually-hidden { position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; border: 0; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
.skip-link { position: absolute; left: -999px; top: 0; background: var(--panel); padding: .5rem 1rem; z-index: 10; }
.skip-link:focus { left: 1rem; top: 1rem; }
.muted { color: var(--muted); }
.small { font-size: .85em; }
.center { text-align: center; }
.lead { color: var(--ink-2); max-width: 60rem; margin-top: -.5rem; }

.shell { display: grid; grid-template-columns: 240px 1fr; min-height: 100vh; }
.sidebar { background: var(--panel); border-right: 1px solid var(--line); padding: 1.25rem 1rem; }
.brand { display: flex; align-items: center; gap: .6rem; font-weight: 700; color: var(--ink); font-size: 1.05rem; margin-bottom: 1.5rem; }
.brand:hover { text-decoration: none; }
.brand-mark { width: 22px; height: 22px; border-radius: 6px; background: linear-gradient(135deg, #635bff, #00d4ff); display: inline-block; }
.nav-group { margin-bottom: 1.25rem; }
.nav-title { text-transform: uppercase; font-size: .72rem; letter-spacing: .06em; color: var(--muted); margin: 0 0 .4rem .6rem; font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.sidebar ul { list-style: none; margin: 0; padding: 0; }
.sidebar li a { display: block; padding: .4rem .6rem; border-radius: 6px; color: var(--ink-2); font-weight: 500; }
.sidebar li a:hover { background: var(--bg); text-decoration: none; }
.sidebar li a.active { background: var(--accent-soft); color: var(--accent); }
.main-col { min-width: 0; }
.topbar { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center; gap: .5rem 1rem; padding: .75rem 2rem; background: var(--panel); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
.crumbs { display: flex; align-items: center; gap: .5rem; font-weight: 600; }
.account { display: flex; align-items: center; gap: .5rem; flex-wrap: wrap; min-width: 0; }
.who { color: var(--muted); font-size: .9em; margin: 0 .25rem; overflow-wrap: anywhere; }
main { padding: 1.75rem 2rem 4rem; max-width: 1200px; }
main:focus { outline: none; }

.lang { display: inline-flex; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; font-size: .8rem; font-weight: 600; }
.lang a, .lang span { padding: .2rem .5rem; }
.lang-current { background: var(--ink); color: #fff; }

.card { background: var(--panel); border-radius: var(--radius); box-shadow: var(--shadow); padding: 1.25rem 1.5rem; margin-bottom: 1.25rem; }
.card-head { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center; gap: 1rem; margin-bottom: .9rem; }
.card-highlight { border: 1px solid var(--accent); background: #fbfbff; }
.grid-2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(380px, 100%), 1fr)); gap: 0 1.25rem; }

.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(210px, 1fr)); gap: 1rem; margin-bottom: 1rem; }
.stat { background: var(--panel); border-radius: var(--radius); box-shadow: var(--shadow); padding: 1rem 1.25rem; }
.stat-label { color: var(--muted); font-size: .85rem; font-weight: 500; }
.stat-value { font-size: 1.5rem; font-weight: 600; margin: .2rem 0; font-variant-numeric: tabular-nums; }
.stat-sub { color: var(--muted); font-size: .85rem; }
meter { width: 100%; height: .6rem; }
.as-of { color: var(--muted); font-size: .85rem; margin: 0 0 1rem; }

.table-wrap { overflow-x: auto; position: relative; }
table { width: 100%; border-collapse: collapse; font-size: .92rem; }
th { text-align: left; font-weight: 600; color: var(--muted); font-size: .78rem; text-transform: uppercase; letter-spacing: .04em; padding: .5rem .75rem; border-bottom: 1px solid var(--line); white-space: nowrap; }
td { padding: .65rem .75rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
/* A row's label (table rowHeaders) reads as the row's first cell, not as a column heading. */
tbody th { font-weight: 400; color: inherit; font-size: inherit; text-transform: none; letter-spacing: normal; white-space: normal; padding: .65rem .75rem; vertical-align: middle; }
tr:last-child td, tbody tr:last-child th { border-bottom: 0; }
tbody tr:hover { background: #fafbfc; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { text-align: left; }
.empty { color: var(--muted); padding: .5rem 0; }

.badge { display: inline-block; padding: .1rem .5rem; border-radius: 999px; font-size: .78rem; font-weight: 600; white-space: nowrap; }
.badge-neutral { background: #ebeef1; color: var(--ink-2); }
.badge-good { background: var(--good-bg); color: var(--good); }
.badge-warn { background: var(--warn-bg); color: var(--warn); }
.badge-bad { background: var(--bad-bg); color: var(--bad); }
.badge-info { background: var(--info-bg); color: var(--info); }
.notice { padding: .75rem 1rem; border-radius: var(--radius); margin-bottom: 1rem; font-weight: 500; border: 1px solid transparent; }
.notice-info { background: var(--info-bg); color: var(--info); }
.notice-good { background: var(--good-bg); color: var(--good); }
.notice-warn { background: var(--warn-bg); color: var(--warn); }
.notice-bad { background: var(--bad-bg); color: var(--bad); }

.btn { display: inline-flex; align-items: center; gap: .35rem; font: inherit; font-weight: 600; font-size: .9rem; border-radius: 6px; padding: .45rem .9rem; border: 1px solid transparent; cursor: pointer; line-height: 1.2; white-space: nowrap; }
.btn:hover { text-decoration: none; }
.btn-primary { background: var(--accent); color: var(--accent-ink); box-shadow: 0 1px 1px rgba(0,0,0,.12); }
.btn-primary:hover { background: #4b44d6; }
.btn-secondary { background: var(--panel); color: var(--ink); border-color: var(--line); box-shadow: 0 1px 1px rgba(0,0,0,.04); }
.btn-secondary:hover { border-color: #c1c9d2; }
.btn-danger { background: var(--panel); color: var(--bad); border-color: #f3c4d6; }
.btn-danger:hover { background: var(--bad-bg); }
.btn-ghost { background: transparent; color: var(--ink-2); }
.btn-ghost:hover { background: var(--bg); }
.btn-sm { padding: .3rem .6rem; font-size: .82rem; }
.btn-block { width: 100%; justify-content: center; padding: .65rem; }
form.inline { display: inline; margin: 0; }
.actions { display: flex; gap: .4rem; align-items: flex-start; justify-content: flex-end; }

.field { display: flex; flex-direction: column; gap: .3rem; margin-bottom: .9rem; min-width: 0; }
.field label { font-weight: 600; font-size: .88rem; }
.help { margin: 0; color: var(--muted); font-size: .8rem; }
.field-error { margin: 0; color: var(--bad); font-size: .82rem; font-weight: 600; }
input[type=text], input[type=email], input[type=password], input[type=number], input[type=date], input[type=url], select {
  font: inherit; padding: .45rem .65rem; border: 1px solid #cfd7df; border-radius: 6px; background: #fff; color: var(--ink); min-width: 0;
}
/* Solid, in the accent (5.6:1 on a card): a pale ring was 1.6:1, under the 3:1 a focus indicator needs. */
input:focus-visible, select:focus-visible { outline: 2px solid var(--accent); border-color: var(--accent); outline-offset: 1px; }
input[readonly] { background: var(--bg); color: var(--muted); }
input[aria-invalid=true], select[aria-invalid=true] { border-color: var(--bad); }
.input-sm { width: 6rem; }
.stack { display: flex; flex-direction: column; }
.narrow { max-width: 28rem; }
.form-row { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: flex-start; }
.form-row .field { flex: 1 1 200px; }
.field-button { flex: 0 0 auto !important; padding-top: 1.6rem; }
.form-row .field-full { flex-basis: 100%; }
.check { display: inline-flex; align-items: center; gap: .3rem; font-size: .88rem; }
.product-form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: 0; }
.product-form .field-error { flex-basis: 100%; }

.toolbar, .toolbar-row { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; margin-bottom: 1rem; }
.toolbar-row { justify-content: space-between; }
.toolbar-row .toolbar { margin-bottom: 0; }
.toolbar label { font-weight: 600; font-size: .88rem; }
.tabs { display: inline-flex; flex-wrap: wrap; max-width: 100%; background: #ebeef1; border-radius: 8px; padding: 3px; gap: 2px; }
.tab { padding: .3rem .75rem; border-radius: 6px; color: var(--ink-2); font-weight: 500; font-size: .88rem; }
.tab:hover { text-decoration: none; background: rgba(255,255,255,.6); }
.tab[aria-current=page] { background: var(--panel); color: var(--ink); box-shadow: var(--shadow); }
.pagination { display: flex; justify-content: space-between; align-items: center; margin-top: 1rem; }
.pagination-ends { text-align: center; margin: .5rem 0 0; }

.secret-row { display: flex; gap: .6rem; align-items: center; flex-wrap: wrap; margin: .5rem 0; }
.secret { font-size: 1rem; padding: .55rem .75rem; background: #f2f4f7; border: 1px dashed #c1c9d2; word-break: break-all; user-select: all; }
.secret.command { font-size: .85rem; }
.copy-status { color: var(--good); font-weight: 600; }
details > summary { cursor: pointer; }
.secret-box { margin-top: .5rem; }
.secret-box summary { color: var(--accent); font-weight: 600; font-size: .9rem; }
.menu { position: relative; }
.menu > summary { list-style: none; }
.menu > summary::-webkit-details-marker { display: none; }
.menu-body { position: absolute; right: 0; top: 110%; z-index: 3; background: var(--panel); border: 1px solid var(--line); box-shadow: 0 8px 24px rgba(60,66,87,.18); border-radius: var(--radius); padding: 1rem; width: 280px; }
.data-table { margin-top: .75rem; }
.data-table summary { color: var(--muted); font-size: .88rem; }

.chart { margin: 0; }
.chart svg { width: 100%; height: auto; display: block; }
.chart .bar { fill: var(--accent); }
.chart .bar:hover { fill: #4b44d6; }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart .axis, .chart .value { fill: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; }
.chart .label { fill: var(--ink-2); font-size: 12px; }
/* The column chart is drawn 760 units wide: shrunk to a phone its 11-unit axis text was 5 pixels
   high. There it keeps 560 pixels, scrolling inside its card (a chart may, WCAG 1.4.10), with
   larger axis text: about 11 pixels. The data table under it reflows. */
@media (max-width: 600px) {
  .chart:has(.axis) { overflow-x: auto; }
  .chart:has(.axis) svg { min-width: 560px; }
  .chart .axis { font-size: 15px; }
}

.org-list { list-style: none; padding: 0; display: grid; gap: .75rem; max-width: 40rem; }
.org-list li { display: flex; justify-content: space-between; align-items: center; margin: 0; }

body.bare { background: linear-gradient(160deg, #f6f9fc 0%, #eef0ff 60%, #e8f7ff 100%); min-height: 100vh; }
.bare-main { max-width: 440px; margin: 0 auto; padding: 3rem 1rem; }
.bare-top { display: flex; justify-content: space-between; align-items: center; margin-bottom: 1.5rem; }
.bare-top .brand { margin: 0; }
.bare-card { padding: 2rem; }
.bare-card h1 { font-size: 1.35rem; }

@media (max-width: 800px) {
  .shell { grid-template-columns: 1fr; }
  .sidebar { position: static; height: auto; border-right: 0; border-bottom: 1px solid var(--line); }
  main, .topbar { padding-left: 1rem; padding-right: 1rem; }
}
/* Up to here the account buttons wrap to two lines or more (in Italian): a sticky bar that tall
   would cover what keyboard focus reaches (WCAG 2.4.11), so it scrolls away with the page. */
@media (max-width: 1100px) { .topbar { position: static; } }
/* Wider, the bar stays on top, up to two lines high: what focus or a link's target scrolls to
   stops below it (the browser also takes a control under the bar for one out of view). */
@media (min-width: 1101px) { html { scroll-padding-top: 9rem; } }
@media (prefers-reduced-motion: no-preference) { .btn, .tab, .sidebar li a { transition: background .12s, border-color .12s; } }
`;
