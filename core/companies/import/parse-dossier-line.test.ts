import { describe, expect, it } from 'vitest';
import { MAX_LINE_CHARACTERS } from './line-blocks.js';
import { formatIssuePath, parseDossierLine } from './parse-dossier-line.js';

const minimal = { fiscalCode: '00905811006', legalName: 'Esempio S.p.A.' };

describe('parseDossierLine', () => {
  it('when the line is a valid dossier then defaults are filled and codes normalised', () => {
    const entry = parseDossierLine(JSON.stringify({ ...minimal, vatNumber: 'it00905811006' }), 4);
    expect(entry).toMatchObject({ ok: true, line: 4, dossier: { fiscalCode: '00905811006', vatNumber: '00905811006', officers: [], years: [], source: 'import' } });
  });

  it('when the line is blank then it is skipped, not rejected', () => {
    expect(parseDossierLine('   \r', 9)).toBeNull();
  });

  it('when the line is not JSON then the rejection says so with the line number', () => {
    const entry = parseDossierLine('{"fiscalCode": "00905811006",', 17);
    expect(entry).toMatchObject({ ok: false, rejection: { line: 17, fiscalCode: null } });
    expect(!entry!.ok && entry!.rejection.reason).toMatch(/^invalid JSON: /);
  });

  it('when fields are wrong then each failing path is named like years[2].year', () => {
    const years = [{ year: 2020 }, { year: 2021 }, { year: 'x' }];
    const entry = parseDossierLine(JSON.stringify({ ...minimal, legalForm: 'LTD', years, extra: 1 }), 3);
    expect(entry!.ok).toBe(false);
    const { reason, fiscalCode } = !entry!.ok ? entry!.rejection : { reason: '', fiscalCode: null };
    expect(fiscalCode).toBe('00905811006');
    expect(reason).toContain('years[2].year: ');
    expect(reason).toContain('legalForm: ');
    expect(reason).toMatch(/\(root\): .*extra/);
  });

  it('when a text holds a NUL (the JSON escape \\u0000) then each such field is named, and an escaped backslash is not one', () => {
    const officers = [{ name: 'Mario Rossi', role: 'AMMINISTRATORE', roleCategory: 'director' }, { name: 'Anna\u0000Bianchi', role: null, roleCategory: 'director' }];
    const entry = parseDossierLine(JSON.stringify({ ...minimal, legalName: 'Esempio\u0000 S.p.A.', officers }), 8);
    expect(entry).toEqual({ ok: false, rejection: { line: 8, fiscalCode: '00905811006', reason: 'legalName: must not contain the NUL character (U+0000); officers[1].name: must not contain the NUL character (U+0000)' } });
    expect(parseDossierLine(JSON.stringify({ ...minimal, legalName: 'C:\\u0000 S.p.A.' }), 9)).toMatchObject({ ok: true, dossier: { legalName: 'C:\\u0000 S.p.A.' } });
  });

  it('when texts hold a UTF-16 surrogate not in a pair (an emoji cut in half) then each such field is named with the escape, wherever it sits', () => {
    // JSON.stringify writes a lone surrogate as its escape, as the file of such a producer holds it.
    const line = JSON.stringify({
      ...minimal,
      legalName: 'Caff\u00e8 \ud83d',
      address: { line1: 'Via Roma 1', locality: '\ude00Roma', countryCode: 'IT' },
      shareholders: [{ name: 'Anna \ud83d\ud83d\ude00', share: 0.5 }],
      officers: [{ name: 'Mario Rossi', role: 'CEO \udbff', roleCategory: 'director' }],
      branches: [{ legalName: 'Sede \ud800x', address: null }],
      years: [{ year: 2024, metrics: [{ slug: 'order_backlog', name: 'Backlog \udfff', value: 1 }] }],
    });
    expect(line).toContain('"Caffè \\ud83d"');
    const message = (escape: string) => `holds an unpaired UTF-16 surrogate (${escape}): the text was cut inside a character; fix or remove it`;
    expect(parseDossierLine(line, 3)).toEqual({ ok: false, rejection: { line: 3, fiscalCode: '00905811006', reason: [
      `legalName: ${message('\\ud83d')}`,
      `address.locality: ${message('\\ude00')}`,
      `shareholders[0].name: ${message('\\ud83d')}`,
      `officers[0].role: ${message('\\udbff')}`,
      `branches[0].legalName: ${message('\\ud800')}`,
    ].join('; ') } });
    const metricName = parseDossierLine(JSON.stringify({ ...minimal, years: [{ year: 2024, metrics: [{ slug: 'order_backlog', name: 'Backlog \udfff', value: 1 }] }] }), 4);
    expect(!metricName!.ok && metricName!.rejection.reason).toBe(`years[0].metrics[0].name: ${message('\\udfff')}`);
    // A key: refused as any unknown key is, but named by its escape, not the broken character.
    const key = parseDossierLine('{"fiscalCode":"00905811006","legalName":"K","x\\ud83d":1}', 5);
    expect(!key!.ok && key!.rejection.reason).toBe(`x\\ud83d: ${message('\\ud83d')}`);
    // A lone surrogate as the string itself, not an escape (a caller's own lines).
    const raw = parseDossierLine('{"fiscalCode":"00905811006","legalName":"K","municipality":"Milano\ud83d"}', 6);
    expect(!raw!.ok && raw!.rejection.reason).toBe(`municipality: ${message('\\ud83d')}`);
  });

  it('when texts hold whole emoji, escaped as a surrogate pair or as they are, then the line is accepted and keeps them', () => {
    const escaped = '{"fiscalCode":"00905811006","legalName":"Caff\\u00e8 \\ud83d\\ude00 S.r.l.","officers":[{"name":"\\uD83C\\uDF55 Pizza","roleCategory":"director"}]}';
    expect(parseDossierLine(escaped, 1)).toMatchObject({ ok: true, dossier: { legalName: 'Caffè 😀 S.r.l.', officers: [{ name: '🍕 Pizza' }] } });
    expect(parseDossierLine(JSON.stringify({ ...minimal, legalName: 'Fiori 🌸 S.r.l.' }), 2)).toMatchObject({ ok: true, dossier: { legalName: 'Fiori 🌸 S.r.l.' } });
    expect(parseDossierLine(JSON.stringify({ ...minimal, legalName: 'C:\\ud83d S.r.l.' }), 3)).toMatchObject({ ok: true, dossier: { legalName: 'C:\\ud83d S.r.l.' } });
  });

  it('when a long line has CR-only line ends or is a JSON array then the refusal says what the file likely is', () => {
    const reason = (text: string) => { const e = parseDossierLine(text, 2); return e && !e.ok ? e.rejection.reason : 'accepted'; };
    expect(reason(`{"legalName":"${'x'.repeat(MAX_LINE_CHARACTERS)}"}\r{"a":1}`)).toMatch(/^line too long: \d+ characters, at most 4194304 for one company \(CR-only line ends, or a JSON array instead of one object per line\?\)$/);
    expect(reason(`[{"legalName":"${'x'.repeat(MAX_LINE_CHARACTERS)}"}]`)).toMatch(/\(CR-only line ends, or a JSON array instead of one object per line\?\)$/);
    expect(reason('[line too long, not kept: 20000000 bytes]')).toBe('line too long: 20000000 bytes, at most 4194304 characters for one company (CR-only line ends, or a JSON array instead of one object per line?)');
  });

  it('when a year repeats a metric, a date does not exist or a headcount or aid is negative then each is named', () => {
    const entry = parseDossierLine(JSON.stringify({
      ...minimal,
      incorporationDate: '2023-02-30',
      headcount: { employees: -5, asOf: '2025-99-99' },
      stateAids: { count: -1, countLast36Months: 0, amount: -100.5, amountLast36Months: 0 },
      years: [{ year: 2023, metrics: [{ slug: 'revenue', value: 1000 }, { slug: 'revenue', value: 60_000_000 }] }],
    }), 5);
    const reason = !entry!.ok ? entry!.rejection.reason : '';
    expect(reason).toContain('incorporationDate: expected a date that exists, YYYY-MM-DD');
    expect(reason).toContain('headcount.employees: ');
    expect(reason).toContain('headcount.asOf: expected a date that exists');
    expect(reason).toContain('stateAids.count: ');
    expect(reason).toContain('stateAids.amount: ');
    expect(reason).toContain('… and 1 more'); // the repeated metric, checked alone below
    const repeated = parseDossierLine(JSON.stringify({ ...minimal, years: [{ year: 2023, metrics: [{ slug: 'revenue', value: 1000 }, { slug: 'revenue', value: 60_000_000 }] }] }), 6);
    expect(!repeated!.ok && repeated!.rejection.reason).toBe('years[0].metrics: each metric at most once a year; repeated: revenue');
  });

  it('when a path is formatted then indexes use brackets and keys dots', () => {
    expect(formatIssuePath(['years', 2, 'metrics', 0, 'value'])).toBe('years[2].metrics[0].value');
    expect(formatIssuePath([])).toBe('(root)');
  });

  it('when a list, a name, a figure or the line passes what the store holds then the line is refused naming the field, not by the database', () => {
    const base = { fiscalCode: '01234567890', legalName: 'Limits S.r.l.' };
    const reason = (value: unknown) => {
      const parsed = parseDossierLine(JSON.stringify(value), 1);
      return parsed && !parsed.ok ? parsed.rejection.reason : 'accepted';
    };
    expect(reason({ ...base, officers: Array.from({ length: 10_001 }, () => ({ name: 'A', roleCategory: 'director' })) })).toMatch(/^officers: /);
    expect(reason({ ...base, officers: Array.from({ length: 10_000 }, () => ({ name: 'A', roleCategory: 'director' })) })).toBe('accepted');
    expect(reason({ ...base, legalName: 'N'.repeat(501) })).toMatch(/^legalName: /);
    expect(reason({ ...base, years: [{ year: 2024, metrics: [{ slug: 'revenue', value: 1e300 }] }] })).toMatch(/^years\[0\]\.metrics\[0\]\.value: /);
    expect(reason({ ...base, years: [{ year: 2024, metrics: [{ slug: 'revenue', value: 1e15 }] }] })).toBe('accepted');
    const aids = (amount: number) => ({ ...base, stateAids: { count: 1, countLast36Months: 1, amount, amountLast36Months: amount } });
    expect(reason(aids(1e300))).toMatch(/^stateAids\.amount: .*; stateAids\.amountLast36Months: /);
    expect(reason(aids(1e15))).toBe('accepted');
    expect(parseDossierLine(`{"fiscalCode":"01234567890","legalName":"${'x'.repeat(4 * 1024 * 1024)}"}`, 7)).toEqual({
      ok: false, rejection: { line: 7, fiscalCode: null, reason: expect.stringMatching(/^line too long: \d+ characters, at most 4194304 for one company$/) },
    });
  });

  it('when a holder or an officer leaves out its name then it is stored as null, as any field left out is', () => {
    const parsed = parseDossierLine(JSON.stringify({
      fiscalCode: '91000000031', legalName: 'Holders S.r.l.', beneficialOwners: [{ share: 0.1 }], shareholders: [{}], officers: [{ roleCategory: 'director' }],
    }), 1);
    expect(parsed).toMatchObject({
      ok: true,
      dossier: {
        beneficialOwners: [{ name: null, share: 0.1, fiscalCode: null }],
        shareholders: [{ name: null, share: null, fiscalCode: null }],
        officers: [{ name: null, role: null, roleCategory: 'director' }],
      },
    });
  });

  it('when an address gives only some of its lines then the others are null, and only countryCode is required', () => {
    const parsed = parseDossierLine(JSON.stringify({ fiscalCode: '01234567890', legalName: 'Address S.r.l.', address: { line1: 'Via Roma 1', countryCode: 'IT' } }), 1);
    expect(parsed).toMatchObject({ ok: true, dossier: { address: { line1: 'Via Roma 1', line2: null, locality: null, postalCode: null, countryCode: 'IT' } } });
    const missing = parseDossierLine(JSON.stringify({ fiscalCode: '01234567890', legalName: 'Address S.r.l.', address: { line1: 'Via Roma 1' } }), 2);
    expect(missing && !missing.ok && missing.rejection.reason).toMatch(/^address\.countryCode: /);
  });

  it('when a catalogue money line item has cents then each such figure is named and refused, and ratios, custom slugs and whole euros pass', () => {
    const year = (metrics: unknown[]) => JSON.stringify({ ...minimal, years: [{ year: 2024, metrics }] });
    const cents = parseDossierLine(year([
      { slug: 'revenue', value: -1000.55 },
      { slug: 'total_assets', value: 5000, previousValue: 4000.5 },
    ]), 4);
    expect(cents).toEqual({ ok: false, rejection: { line: 4, fiscalCode: '00905811006', reason: [
      'years[0].metrics[0].value: is money in whole euros, but -1000.55 has cents: round it to the euro',
      'years[0].metrics[1].previousValue: is money in whole euros, but 4000.5 has cents: round it to the euro',
    ].join('; ') } });
    expect(parseDossierLine(year([
      { slug: 'revenue', value: -1001 },
      { slug: 'roe', value: 0.125 },
      { slug: 'visits', name: 'Visits per day', unit: 'visits', value: 3.5 },
      { slug: 'revenue_per_hour', name: 'Revenue per hour', unit: null, value: 0.5 },
      // A custom slug's money keeps its cents: a per-share amount is not a line of the accounts.
      { slug: 'dividend_per_share', name: 'Dividend per share', unit: 'EUR', value: 0.35 },
    ]), 5)).toMatchObject({ ok: true });
    // A catalogue slug's unit is the catalogue's, whatever the line says.
    expect(parseDossierLine(year([{ slug: 'total_debts', unit: 'ratio', value: 0.5 }]), 6)).toMatchObject({ ok: false, rejection: { reason: 'years[0].metrics[0].value: is money in whole euros, but 0.5 has cents: round it to the euro' } });
    expect(parseDossierLine(year([{ slug: 'roe', unit: 'EUR', value: 0.5 }]), 7)).toMatchObject({ ok: true });
  });

  it('when fields contradict each other (aids of the last 36 months above all aids, a dissolution before the founding, a statement of another year) then each is refused at its field', () => {
    const aids = JSON.stringify({ ...minimal, stateAids: { count: 1, countLast36Months: 5, amount: 1_000, amountLast36Months: 90_000 } });
    expect(parseDossierLine(aids, 2)).toEqual({ ok: false, rejection: { line: 2, fiscalCode: '00905811006', reason: [
      'stateAids.countLast36Months: is 5, more than count (1), of which it is a part',
      'stateAids.amountLast36Months: is 90000, more than amount (1000), of which it is a part',
    ].join('; ') } });
    const years = JSON.stringify({ ...minimal, foundingYear: 2015, dissolutionYear: 2010, years: [{ year: 2024, statementDate: '2019-12-31' }, { year: 2023, statementDate: '2024-06-30' }] });
    expect(parseDossierLine(years, 3)).toEqual({ ok: false, rejection: { line: 3, fiscalCode: '00905811006', reason: [
      'dissolutionYear: is 2010, before foundingYear (2015)',
      'years[0].statementDate: is 2019-12-31, not within a year of the fiscal year 2024',
    ].join('; ') } });
    // Checked among fields that are each valid: a count refused on its own is not also compared.
    expect(parseDossierLine(JSON.stringify({ ...minimal, stateAids: { count: -1, countLast36Months: 0, amount: null, amountLast36Months: null } }), 4))
      .toMatchObject({ ok: false, rejection: { reason: expect.not.stringContaining('of which it is a part') } });
    const consistent = JSON.stringify({
      ...minimal, foundingYear: 2015, dissolutionYear: 2015,
      stateAids: { count: 3, countLast36Months: 3, amount: 1_000, amountLast36Months: null },
      years: [{ year: 2024, statementDate: '2025-06-30' }, { year: 2023, statementDate: '2023-12-31' }],
    });
    expect(parseDossierLine(consistent, 5)).toMatchObject({ ok: true });
  });
});
