import { csvLine, type CsvSeparator } from './csv-line.js';
import { ledgerColumns, type LedgerEntry } from './ledger-export.js';

// The ledger export as CSV, shared by `ledger export --format csv` and the dashboard's ledger
// download, so the two hold the same rows: one line per row (no line end), the export's order,
// the report's quoting (formula-injection guard included).

/**
 * The header, then one line per row. The header comes once the first chunk has been read (a
 * store that fails at once yields nothing, so the caller has written nothing), and alone when
 * there are no rows: a script reads an empty file, not none.
 */
export async function* ledgerCsvLines(rows: AsyncIterable<LedgerEntry>, separator: CsvSeparator = ','): AsyncGenerator<string> {
  let count = 0;
  const header = csvLine([...ledgerColumns], separator);
  for await (const row of rows) {
    if (count++ === 0) yield header;
    yield csvLine(ledgerColumns.map((c) => row[c]), separator);
  }
  if (count === 0) yield header;
}
