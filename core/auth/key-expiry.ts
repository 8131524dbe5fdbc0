// A key given an expiry *date* (no time) is valid through that day, UTC: it stops at the day's
// last millisecond. The dashboard's form and `cli key create --expires` both read a date so,
// so the same words give a key the same life whichever tool made it.
export function endOfDayUtc(day: string): Date {
  return new Date(`${day}T23:59:59.999Z`);
}
