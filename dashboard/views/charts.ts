import { escapeHtml, raw, type Html } from './html.js';

// Charts drawn here as SVG: no script, no external library, readable without CSS, and each
// comes with a data table next to it for screen readers and copying.

export interface ChartPoint {
  label: string;
  value: number;
  /** What the axis says under the column, shorter than the label ("27 Nov"); default: the label. */
  tick?: string;
}

function niceMax(max: number): number {
  if (max <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) if (max <= step * magnitude) return step * magnitude;
  return 10 * magnitude;
}

/**
 * The top of the axis for whole quantities (credits, calls): four times a whole, round tick, so
 * the four gridlines read whole numbers (a top of 50 would label one 12.5 credits, which no one uses).
 */
function niceWholeMax(max: number): number {
  const quarter = max / 4;
  if (quarter <= 1) return 4;
  const magnitude = 10 ** Math.floor(Math.log10(quarter));
  for (const step of [1, 2, 2.5, 5, 10]) if (quarter <= step * magnitude && Number.isInteger(step * magnitude)) return 4 * step * magnitude;
  return 40 * magnitude;
}

export function columnChart(options: { title: string; points: ChartPoint[]; format: (n: number) => string; tickEvery?: number }): Html {
  const width = 760;
  const height = 240;
  const pad = { top: 12, right: 12, bottom: 28, left: 56 };
  const innerW = width - pad.left - pad.right;
  const innerH = height - pad.top - pad.bottom;
  const highest = Math.max(0, ...options.points.map((p) => p.value));
  const max = options.points.every((p) => Number.isInteger(p.value)) ? niceWholeMax(highest) : niceMax(highest);
  const n = Math.max(1, options.points.length);
  const slot = innerW / n;
  const barW = Math.max(2, Math.min(28, slot * 0.7));
  const tickEvery = options.tickEvery ?? Math.max(1, Math.ceil(n / 10));
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const y = pad.top + innerH - (innerH * i) / 4;
    parts.push(`<line class="grid" x1="${pad.left}" x2="${width - pad.right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}"/>`);
    parts.push(`<text class="axis" x="${pad.left - 8}" y="${(y + 4).toFixed(1)}" text-anchor="end">${escapeHtml(options.format((max * i) / 4))}</text>`);
  }
  options.points.forEach((p, i) => {
    const h = (innerH * p.value) / max;
    const x = pad.left + slot * i + (slot - barW) / 2;
    const y = pad.top + innerH - h;
    parts.push(`<rect class="bar" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${barW.toFixed(1)}" height="${Math.max(0, h).toFixed(1)}" rx="2"><title>${escapeHtml(`${p.label}: ${options.format(p.value)}`)}</title></rect>`);
    if (i % tickEvery === 0) parts.push(`<text class="axis" x="${(pad.left + slot * i + slot / 2).toFixed(1)}" y="${height - 8}" text-anchor="middle">${escapeHtml(p.tick ?? p.label)}</text>`);
  });
  return raw(`<figure class="chart"><svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(options.title)}" preserveAspectRatio="xMidYMid meet">${parts.join('')}</svg></figure>`);
}

export function barList(options: { title: string; points: ChartPoint[]; format: (n: number) => string }): Html {
  const width = 760;
  const rowH = 30;
  const labelW = 240;
  const valueW = 90;
  const height = Math.max(rowH, options.points.length * rowH) + 8;
  const max = Math.max(1, ...options.points.map((p) => p.value));
  const innerW = width - labelW - valueW;
  const parts = options.points.map((p, i) => {
    const y = 4 + i * rowH;
    const w = (innerW * p.value) / max;
    return `<text class="label" x="0" y="${y + 19}">${escapeHtml(p.label.length > 34 ? `${p.label.slice(0, 33)}…` : p.label)}</text>`
      + `<rect class="bar" x="${labelW}" y="${y + 5}" width="${Math.max(1, w).toFixed(1)}" height="${rowH - 10}" rx="3"><title>${escapeHtml(`${p.label}: ${options.format(p.value)}`)}</title></rect>`
      + `<text class="value" x="${width}" y="${y + 19}" text-anchor="end">${escapeHtml(options.format(p.value))}</text>`;
  });
  return raw(`<figure class="chart"><svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(options.title)}">${parts.join('')}</svg></figure>`);
}
