import v8 from 'node:v8';

// Two V8 settings for the API process, set in code, not in NODE_OPTIONS (which refuses both V8
// flags), so the API gets them however it is started (the image, the benches). V8 reads each
// when it needs it (after a collection), so setting them first thing at start-up takes effect.
// Only the API calls this: it is where the RSS and p99 targets apply and where both were
// measured. The tool server keeps a larger live heap (answers as objects) and nothing measured
// these there; the all-in-one `npm start` is left alone for the same reason.
//
// 1. How much the old generation may grow past what survived the last full collection before
//    it is collected again: a factor of 2. V8's own factor (up to 4 when the collector looks
//    fast next to the program) let the API's RSS peak at 194–203 MB under company-report load
//    (npm run bench, 2,000 codes round robin: each ~50 KB report is built across a database
//    round trip, survives the young generation and dies in the old one). With 2: 129–141 MB,
//    and report and financials throughput within run-to-run noise (measured 22 Nov 2026).
//    Lower factors gain little more (1.5: 128–131 MB) and 1.2 cost about a quarter of report
//    throughput. (Those figures are with 8 MB semi-spaces; with V8's default 16 MB, which the
//    image uses since late on 22 Nov (see the Dockerfile), the peak is 155–174 MB.)
// 2. No allocation-site pretenuring. Under report load most objects of a call outlive a young
//    collection (the call waits on the database with them), so V8 learns to allocate at those
//    sites straight into the old generation; many of the sites are the ones every call uses
//    (Koa's context, headers, the envelope), and the decision stays after the report load
//    ends. Financials calls at a steady 4,000 a second after a report pass then ran a young
//    collection of 5.3 ms at p50 (up to 15.6) every ~80 ms, and a full one every ~0.8 s, for a
//    p99 of 28–36 ms; with pretenuring off, 0.84 ms young collections and a p99 of 6.2–7.6 ms
//    (same machine, same minutes, 25 Nov 2026). Objects that really live long (the caches)
//    are promoted by the young collector after surviving it, as before.
const HEAP_GROWING_PERCENT = 100;

/** Called first by the API process (api/main.ts). */
export function tuneHeap(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
