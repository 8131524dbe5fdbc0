import { describe, expect, it } from 'vitest';
import { saidWithVowel } from './italian-articles.js';
import { formats, translator } from './translate.js';

describe('numbers on the pages', () => {
  it('when a number has four digits then it is grouped in both languages, as the larger ones next to it are', () => {
    expect([formats('it').number(1013), formats('it').number(100_000)]).toEqual(['1.013', '100.000']);
    expect([formats('en').number(1013), formats('en').number(100_000)]).toEqual(['1,013', '100,000']);
  });
});

describe('Italian articles before numbers', () => {
  const t = translator('it');
  const f = formats('it');
  const day = (d: number) => f.date(new Date(Date.UTC(2029, 10, d)));

  it('when a date falls on the 1st, 8th or 11th then the article before it is elided, and not on other days', () => {
    expect(t('overview.runOutAt', { date: day(8) })).toBe("intorno all'8 nov 2029");
    expect(t('overview.runOutAt', { date: day(11) })).toBe("intorno all'11 nov 2029");
    expect(t('overview.runOutAt', { date: day(1) })).toBe("intorno all'1 nov 2029");
    expect(t('overview.runOutAt', { date: day(18) })).toBe('intorno al 18 nov 2029');
    expect(t('alerts.fired', { time: f.dateTime(new Date(Date.UTC(2029, 10, 11, 9, 5))) })).toBe("Scattata l'11 nov 2029, 09:05 UTC");
    expect(t('report.generated', { time: f.dateTime(new Date(Date.UTC(2029, 10, 2, 9, 5))) })).toBe('Generato il 2 nov 2029, 09:05 UTC');
    expect(t('ledger.callAt', { time: f.dateTime(new Date(Date.UTC(2029, 10, 8, 9, 5))) })).toBe("chiamata dell'8 nov 2029, 09:05 UTC");
    // Capitalised at the start of a sentence.
    expect(t('refusal.removed', { date: day(8) })).toBe("Non fai più parte di questa organizzazione dall'8 nov 2029: le sue pagine non ti sono più accessibili.");
    expect(t('refusal.roleChanged', { date: day(8), org: 'Acme', role: 'finanza' })).toMatch(/^Dall'8 nov 2029 il tuo ruolo/);
  });

  it('when a percentage is said with a vowel then its article is elided too; numbers with a grouping dot keep theirs', () => {
    expect(t('banner.threshold.percent_used', { value: 80 })).toBe("Avviso: in questo periodo l'uso della dotazione ha raggiunto l'80%.");
    expect(t('banner.threshold.percent_used', { value: 75 })).toBe('Avviso: in questo periodo l\'uso della dotazione ha raggiunto il 75%.');
    expect([saidWithVowel('8'), saidWithVowel('8,5'), saidWithVowel('1.000'), saidWithVowel('8.000'), saidWithVowel('18'), saidWithVowel('811')]).toEqual([true, true, false, false, false, true]);
  });

  it('when the page is in English then nothing changes', () => {
    expect(translator('en')('overview.runOutAt', { date: formats('en').date(new Date(Date.UTC(2029, 10, 8))) })).toBe('around 8 Nov 2029');
  });
});
