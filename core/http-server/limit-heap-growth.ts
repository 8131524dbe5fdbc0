import v8 from 'node:v8';

// How much V8 lets the old generation grow past what survived the last full collection before
// it collects again: a factor of 2. V8's own factor (up to 4 when the collector looks fast
// next to the program) let the API's RSS peak at 194–203 MB under company-report load
// (npm run bench, 2,000 codes round robin: each ~50 KB report is built across a database round
// trip, survives the young generation and dies in the old one). With 2: 129–141 MB, and
// report and financials throughput within run-to-run noise (measured 22 Nov 2026). Lower
// factors gain little more (1.5: 128–131 MB) and 1.2 cost about a quarter of report throughput.
// (Those figures are with 8 MB semi-spaces; with V8's default 16 MB, which the image uses since
// late on 22 Nov (see the Dockerfile), the peak is 155–174 MB.)
//
// Set in code, not in NODE_OPTIONS (which refuses this V8 flag), so the API process gets it
// however it is started (the image, the benches). V8 reads the flag whenever it sizes the heap
// again after a collection, so setting it at start-up takes effect. Only the API calls it: it is
// where the RSS target applies and where it was measured. The tool server keeps a larger live
// heap (answers as objects), where more frequent full collections could cost throughput, and
// nothing measured it there; the all-in-one `npm start` is left alone for the same reason.
const HEAP_GROWING_PERCENT = 100;

/** Called first by the API process (api/main.ts). */
export function limitHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
