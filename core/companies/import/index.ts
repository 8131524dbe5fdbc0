export { importDossiers, writeDossiers, DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE, type ImportCounts, type ImportDossiersOptions, type ImportProgress, type ImportSummary, type UpsertFn, type WriteDossiersOptions } from './import-dossiers.js';
export { parseDossierLine, parseDossierValue, formatIssuePath, formatIssues, type ImportRejection, type ParsedEntry } from './parse-dossier-line.js';
