export { ensureSampleData, type EnsureSampleDataOptions, type EnsureSampleDataResult } from './ensure-sample-data.js';
export { pickSampleFiscalCodes } from './pick-sample-fiscal-codes.js';
export { generateDossiers, SAMPLE_SOURCE, DEFAULT_LATEST_YEAR, MAX_SAMPLE_COMPANIES, type GenerateOptions } from './generate-dossiers.js';
export { LATEST_YEAR_RANGE, latestYearRefusal } from './latest-year-range.js';
export { makePartitaIva } from './partita-iva.js';
export { makeCodiceFiscale } from './codice-fiscale.js';
export { loadReferenceData, type ReferenceData } from './reference-data.js';
