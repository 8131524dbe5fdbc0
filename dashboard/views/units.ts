import type { DashboardState } from '../state.js';

type Reader = Pick<DashboardState, 't' | 'f'>;

/** The word for a measure's unit after `quantity` of it, in the page's language: '1 credito', '2 crediti'.
 * A unit the catalogues do not know (a newer one) shows as recorded. */
export function unitWord(reader: Pick<DashboardState, 't'>, unit: string, quantity: number): string {
  return unit === 'credits' || unit === 'calls' ? reader.t(`unit.${unit}`, { count: quantity }) : unit;
}

/** A count and its unit: '1 call', '1.000 crediti'. */
export function measure(reader: Reader, quantity: number, unit: string): string {
  return `${reader.f.number(quantity)} ${unitWord(reader, unit, quantity)}`;
}
