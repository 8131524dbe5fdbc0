export * from './common.js';
export * from './endpoint-data.js';
export * from './company-dossier.js';
