import v8 from 'node:v8';

// Two V8 settings for the serving processes, set in code, not in NODE_OPTIONS (which refuses
// both V8 flags), so they apply however a process is started (the image, the benches). V8 reads
// each when it needs it (after a collection), so setting them first thing at start-up takes
// effect. Called by the API (where the RSS and p99 targets apply and both were measured), the
// tool server and the all-in-one `npm start`, whose calls have the same shape (objects held
// across a database round trip and a usage event's commit). The tool server with them, in
// alternating 5 s passes after 10 s of analysis calls (26 Nov 2026, machine's PostgreSQL 15):
// 10,036–12,103 profile calls/s against 9,858–10,708 without, p99 7–9 ms against 8–13 ms.
// Other CLI commands (an import holds large batches) keep V8's defaults.
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

/** Called first by api/main.ts, mcp/main.ts and `npm start` (cli/commands/start). */
export function tuneHeap(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
