import type { JsonSchema } from './component-schemas.js';

// The Italian of the descriptions the response schemas carry. English is written once, on the
// zod schemas themselves (`.describe()` in core/companies/schemas, which the MCP tools' output
// schemas share); this table translates it, keyed by the English sentence:
// - a field that appears in several schemas (CompanyIdentity's fields inside the reports'
//   identities, AnnualSnapshot's inside financials, `latest` in every endpoint) is one schema
//   with one sentence, so it is translated once and reads the same everywhere;
// - a sentence changed in English without its Italian here stays English in the Italian
//   document, which a test refuses (test/api-openapi.test.ts): the two languages cannot come
//   to say different things unnoticed, as they could with a table keyed by schema and field;
// - Italian prose stays out of the schemas the importer and the MCP tools also use.
// The envelope and error schemas, defined outside core/companies/schemas, are described in
// texts.ts in both languages.
export const italianDescriptions: Readonly<Record<string, string>> = {
  // The closed lists (NACE sections and metric categories share their fields' sentences)
  'Company size under the EU SME definition (Recommendation 2003/361/EC).': 'Dimensione dell\'impresa secondo la definizione UE di PMI (Raccomandazione 2003/361/CE).',
  'Italian legal form, as commonly abbreviated.': 'Forma giuridica italiana, con l\'abbreviazione comune.',
  'Category of an officer\'s role.': 'Categoria della carica di un esponente.',

  // Address
  'A postal address. Fields other than countryCode are null when unknown.': 'Un indirizzo postale. I campi diversi da countryCode sono null se non noti.',
  'First address line: street and number.': 'Prima riga dell\'indirizzo: via e numero civico.',
  'Second address line, when there is one.': 'Seconda riga dell\'indirizzo, se presente.',
  'Town or city (comune).': 'Comune o città.',
  'Postal code (CAP).': 'Codice di avviamento postale (CAP).',
  'Two-letter ISO 3166-1 country code, e.g. IT.': 'Codice ISO 3166-1 del paese, di due lettere, ad esempio IT.',

  // CompanyIdentity
  'Descriptive, non-financial data identifying the company. Each field is null when unknown.':
    'Dati descrittivi, non finanziari, che identificano l\'impresa. Ogni campo è null se non noto.',
  'Registered name of the company (ragione sociale).': 'Denominazione o ragione sociale dell\'impresa.',
  'Legal form, as commonly abbreviated: e.g. SRL (società a responsabilità limitata), SPA (società per azioni), SC (cooperativa), DI (ditta individuale).':
    'Forma giuridica, con l\'abbreviazione comune: ad esempio SRL (società a responsabilità limitata), SPA (società per azioni), SC (cooperativa), DI (ditta individuale).',
  'Year the company was founded.': 'Anno di fondazione dell\'impresa.',
  'Date of incorporation, YYYY-MM-DD.': 'Data di costituzione, nel formato YYYY-MM-DD.',
  'Whether the company is listed on a stock exchange.': 'Se l\'impresa è quotata in borsa.',
  'Italian VAT number (partita IVA), 11 digits.': 'Partita IVA italiana, di 11 cifre.',
  'Italian fiscal code (codice fiscale): 11 digits, or 16 characters for a person such as a sole proprietor.':
    'Codice fiscale italiano: 11 cifre, oppure 16 caratteri per una persona fisica, come il titolare di una ditta individuale.',
  'NACE Rev. 2 activity code, e.g. 62.01; its first two digits are the NACE division.':
    'Codice di attività NACE Rev. 2, ad esempio 62.01; le prime due cifre sono la divisione NACE.',
  'NACE Rev. 2 section, a letter from A to U.': 'Sezione NACE Rev. 2, una lettera dalla A alla U.',
  'Address of the registered office.': 'Indirizzo della sede legale.',

  // Registry
  'Registration data from the Chamber of Commerce. Each field is null when unknown.': 'Dati di iscrizione alla Camera di Commercio. Ogni campo è null se non noto.',
  'Certified e-mail address (PEC, posta elettronica certificata).': 'Indirizzo di posta elettronica certificata (PEC).',
  'Chamber of Commerce (CCIAA) registration.': 'Iscrizione alla Camera di Commercio (CCIAA).',
  'REA number (Repertorio Economico Amministrativo) in the Chamber of Commerce register.':
    'Numero REA (Repertorio Economico Amministrativo) nel registro della Camera di Commercio.',

  // Headcount
  'Number of employees at a date.': 'Numero di dipendenti a una certa data.',
  'Employee count.': 'Numero di dipendenti.',
  'Date the count refers to, YYYY-MM-DD.': 'Data a cui si riferisce il conteggio, nel formato YYYY-MM-DD.',

  // RiskIndicators
  'Risk flags: each is true, false, or null when unknown.': 'Indicatori di rischio: ciascuno è true, false, oppure null se non noto.',
  'Whether protested bills or cheques (protesti) are on record against the company.': 'Se risultano protesti di cambiali o assegni a carico dell\'impresa.',
  'Whether insolvency proceedings concern the company.': 'Se l\'impresa è interessata da procedure concorsuali.',
  'Whether applications to open insolvency proceedings have been filed against the company.':
    'Se sono state presentate istanze di apertura di procedure concorsuali nei confronti dell\'impresa.',
  'Whether encumbrances, such as mortgages or seizures, are registered on the company\'s assets.':
    'Se sui beni dell\'impresa sono iscritti gravami, come ipoteche o pignoramenti.',
  'Whether any officer of the company carries risk indicators.': 'Se qualche esponente dell\'impresa presenta indicatori di rischio.',

  // StateAids
  'State aids (aiuti di Stato) granted to the company. Each field is null when unknown.': 'Aiuti di Stato concessi all\'impresa. Ogni campo è null se non noto.',
  'Number of state aids received.': 'Numero di aiuti di Stato ricevuti.',
  'Number of state aids received in the last 36 months.': 'Numero di aiuti di Stato ricevuti negli ultimi 36 mesi.',
  'Total amount of the state aids received, in euro.': 'Importo totale degli aiuti di Stato ricevuti, in euro.',
  'Total amount of the state aids received in the last 36 months, in euro.': 'Importo totale degli aiuti di Stato ricevuti negli ultimi 36 mesi, in euro.',

  // Holder
  'A shareholder, beneficial owner or subsidiary: its name and the ownership fraction. Each field is null when unknown.':
    'Un socio, un titolare effettivo o una società controllata: il nome e la quota di partecipazione. Ogni campo è null se non noto.',
  'Name of the person or entity; no other personal identifiers are given.': 'Nome della persona o dell\'ente; non sono forniti altri dati identificativi personali.',
  'Ownership fraction from 0 to 1 (0.25 = 25%): of the company held by a shareholder or owner, or of a subsidiary held by the company.':
    'Quota di partecipazione come frazione da 0 a 1 (0.25 = 25%): dell\'impresa detenuta da un socio o titolare, oppure di una controllata detenuta dall\'impresa.',

  // Officer
  'A person or entity holding an office in the company.': 'Una persona o un ente che ricopre una carica nell\'impresa.',
  'Name of the officer; null when unknown.': 'Nome dell\'esponente; null se non noto.',
  'Role as registered, in Italian (e.g. Amministratore unico); null when unknown.': 'Carica come registrata, in italiano (ad esempio Amministratore unico); null se non nota.',
  'Category of the role, from a closed list.': 'Categoria della carica, da un elenco chiuso.',

  // CompanyBranch
  'A secondary office (sede secondaria) of the company.': 'Una sede secondaria dell\'impresa.',
  'Name of the branch.': 'Denominazione della sede secondaria.',
  'Address of the branch; null when unknown.': 'Indirizzo della sede secondaria; null se non noto.',

  // AnnualSnapshot
  'Headline figures of one fiscal year.': 'Dati di sintesi di un esercizio.',
  'Fiscal year.': 'Anno dell\'esercizio.',
  'Whether the figures are a forecast rather than filed.': 'Se i dati sono una previsione anziché dati depositati.',
  'Company size that year under the EU SME definition (Recommendation 2003/361/EC); null when unknown.':
    'Dimensione dell\'impresa in quell\'anno secondo la definizione UE di PMI (Raccomandazione 2003/361/CE); null se non nota.',
  'Closing date of the financial statement, YYYY-MM-DD; null when unknown.': 'Data di chiusura del bilancio, nel formato YYYY-MM-DD; null se non nota.',
  'Employee count that year; null when unknown.': 'Numero di dipendenti in quell\'anno; null se non noto.',
  'Change in the employee count from the year before, as a fraction (0.1 = +10%); null when it cannot be computed.':
    'Variazione del numero di dipendenti rispetto all\'anno precedente, come frazione (0.1 = +10%); null se non calcolabile.',

  // FinancialMetric
  'One reported line item or derived metric of a fiscal year.': 'Una voce di bilancio o un indicatore derivato di un esercizio.',
  'Stable identifier of the line item or metric, in lower snake_case (e.g. revenue, total_assets).':
    'Identificativo stabile della voce o dell\'indicatore, in snake_case minuscolo (ad esempio revenue, total_assets).',
  'Display name of the line item or metric.': 'Nome della voce o dell\'indicatore, da mostrare.',
  'Categories the item belongs to, from a closed list.': 'Categorie a cui appartiene la voce, da un elenco chiuso.',
  'A category of line items.': 'Una categoria di voci.',
  'Unit of the values: EUR for amounts in euro, ratio for fractions (0.12 = 12%), days for durations; null when none is given.':
    'Unità dei valori: EUR per importi in euro, ratio per frazioni (0.12 = 12%), days per durate in giorni; null se non indicata.',
  'Value that year, in the unit given.': 'Valore in quell\'anno, nell\'unità indicata.',
  'Value the year before; null when not on file, or when this year is filed and the year before is a forecast (a filed figure is never compared with a forecast).':
    'Valore dell\'anno precedente; null se non disponibile, o se quest\'anno è un bilancio depositato e l\'anno precedente una previsione (un dato depositato non si confronta mai con una previsione).',
  'Relative change from the year before, (value - previousValue) / |previousValue|, as a fraction (0.05 = +5%); for a ratio, not the change in points (0.33 to 0.317 is -0.0394); null when it cannot be computed.':
    'Variazione relativa rispetto all\'anno precedente, (value - previousValue) / |previousValue|, come frazione (0.05 = +5%); per un indice non è la variazione in punti (da 0.33 a 0.317 è -0.0394); null se non calcolabile.',
  'Market reference value of the item, as supplied with the company data; null when none.':
    'Valore di riferimento di mercato della voce, come fornito con i dati dell\'impresa; null se assente.',
  'Score of the item, as supplied with the company data; null when none.': 'Punteggio della voce, come fornito con i dati dell\'impresa; null se assente.',

  // Fields shared by the endpoints' data
  'The service\'s internal identifier of the company.': 'Identificativo interno dell\'impresa nel servizio.',
  'Whether the figures come from consolidated (group) statements.': 'Se i dati provengono da bilanci consolidati (di gruppo).',
  'Most recent fiscal year with filed figures; null when none are on file.': 'Ultimo esercizio con bilancio depositato; null se non ce n\'è nessuno.',
  'Headline figures of the most recent filed fiscal year; null when none are on file.': 'Dati di sintesi dell\'ultimo esercizio depositato; null se non ce n\'è nessuno.',
  'Identity of the company.': 'Anagrafica dell\'impresa.',
  'Whether the company is foreign-owned; null when unknown.': 'Se l\'impresa è di proprietà estera; null se non noto.',
  'Name of the entity controlling the company; null when there is none or it is unknown.': 'Nome dell\'ente che controlla l\'impresa; null se non c\'è o non è noto.',
  'Chamber of Commerce registration data; null when unknown.': 'Dati di iscrizione alla Camera di Commercio; null se non noti.',
  'Latest employee count; null when unknown.': 'Ultimo numero di dipendenti; null se non noto.',
  'Risk indicators.': 'Indicatori di rischio.',
  'State aids received; null when unknown.': 'Aiuti di Stato ricevuti; null se non noti.',
  'Officers of the company: representatives, directors, auditors and the like.': 'Esponenti dell\'impresa: rappresentanti, amministratori, sindaci, revisori e simili.',
  'Shareholders of the company, with the fraction each holds.': 'Soci dell\'impresa, con la quota detenuta da ciascuno.',

  // Company report
  'The company report: everything in the credit report plus multi-year statements with every line item, branches, beneficial owners and subsidiaries.':
    'Il report aziendale: tutto il contenuto del report di credito più i bilanci di più anni con ogni voce, le sedi secondarie, i titolari effettivi e le società controllate.',
  'Identity of the company, with when it started trading, its dissolution, its foreign ownership and its controlling entity.':
    'Anagrafica dell\'impresa, con l\'inizio dell\'attività, lo scioglimento, la proprietà estera e l\'ente controllante.',
  'Date the company started trading, YYYY-MM-DD; null when unknown.': 'Data di inizio dell\'attività, nel formato YYYY-MM-DD; null se non nota.',
  'Year the company was dissolved; null when it was not, or when unknown.': 'Anno di scioglimento dell\'impresa; null se non è stata sciolta o se non noto.',
  'Who owns the company and what it owns.': 'Chi possiede l\'impresa e che cosa possiede l\'impresa.',
  'Beneficial owners (titolari effettivi) of the company. A share of null is one the register gives none for: as when no natural person holds more than 25% and the law then names the legal representative or managing official, who may hold nothing.':
    'Titolari effettivi dell\'impresa. Una quota null è una che il registro non indica: come quando nessuna persona fisica detiene più del 25% e la legge indica allora il legale rappresentante o chi amministra, che può non detenere quote.',
  'Companies this company holds shares in, with the fraction it holds.': 'Società in cui l\'impresa detiene partecipazioni, con la quota detenuta.',
  'Secondary offices of the company.': 'Sedi secondarie dell\'impresa.',
  'Up to 10 fiscal years, newest first, each with every reported line item.': 'Fino a 10 esercizi, dal più recente, ciascuno con tutte le voci riportate.',
  'Headline figures of one fiscal year, with its line items.': 'Dati di sintesi di un esercizio, con le sue voci di bilancio.',
  'Every line item and metric reported for that year.': 'Tutte le voci e gli indicatori riportati per quell\'anno.',

  // Credit report
  'The credit report: identity, registry data, headcount, risk indicators, state aids, shareholders, officers and recent headline figures.':
    'Il report di credito: anagrafica, dati camerali, numero di dipendenti, indicatori di rischio, aiuti di Stato, soci, esponenti e dati di sintesi recenti.',
  'Identity of the company, with its foreign ownership and its controlling entity.': 'Anagrafica dell\'impresa, con la proprietà estera e l\'ente controllante.',
  'Up to 5 recent fiscal years of headline figures, newest first, without line items.': 'Fino a 5 esercizi recenti di dati di sintesi, dal più recente, senza le voci di bilancio.',

  // Company profile
  'The company profile: identity and latest figures, then exactly one branch by size: peerCount and peers for a large company, risk for the others.':
    'Il profilo aziendale: anagrafica e ultimi dati, poi una sola sezione in base alla dimensione: peerCount e peers per una grande impresa, risk per le altre.',
  'Profile of a large company (EU SME definition: 250 or more employees, or turnover above EUR 50 million and balance-sheet total above EUR 43 million): its peers.':
    'Profilo di una grande impresa (definizione UE di PMI: almeno 250 dipendenti, oppure fatturato superiore a 50 milioni di euro e totale di bilancio superiore a 43 milioni di euro): le imprese comparabili.',
  'Number of other companies in the same NACE division, of any size; peers lists at most 10 of them, so this can be larger than the length of peers.':
    'Numero delle altre imprese della stessa divisione NACE, di qualsiasi dimensione; peers ne elenca al massimo 10, quindi questo numero può superare la lunghezza di peers.',
  'Up to 10 companies of the same NACE division nearest in size: by latest revenue, or by headcount when the company has no revenue on file.':
    'Fino a 10 imprese della stessa divisione NACE più vicine per dimensione: per ultimo fatturato, o per numero di dipendenti se l\'impresa non ha fatturato registrato.',
  'A comparable company: same NACE division, nearest in size.': 'Un\'impresa comparabile: stessa divisione NACE, la più vicina per dimensione.',
  'Profile of a micro, small or medium company: its risk summary.': 'Profilo di una micro, piccola o media impresa: la sintesi dei rischi.',
  'Risk summary of the company: its risk flags, state aids and recent years.': 'Sintesi dei rischi dell\'impresa: indicatori di rischio, aiuti di Stato e anni recenti.',
  'Risk flags (each true, false, or null when unknown), state aids and recent history.':
    'Indicatori di rischio (ciascuno true, false, oppure null se non noto), aiuti di Stato e storico recente.',
  'Number and total amount (in euro) of the state aids received. Each field is null when unknown.':
    'Numero e importo totale (in euro) degli aiuti di Stato ricevuti. Ogni campo è null se non noto.',
  'Number and total amount (in euro) of the state aids received; null when unknown.': 'Numero e importo totale (in euro) degli aiuti di Stato ricevuti; null se non noti.',
  'Up to 5 recent fiscal years of headline figures, newest first.': 'Fino a 5 esercizi recenti di dati di sintesi, dal più recente.',

  // Company financials
  'The company financials: identity, whether figures are consolidated, the latest filed year and its headline figures.':
    'I dati finanziari aziendali: anagrafica, se i dati sono consolidati, l\'ultimo esercizio depositato e i suoi dati di sintesi.',
};

/** A copy of `schema` with every description translated; one without a translation is kept. */
export function translateDescriptions(schema: JsonSchema, translations: Readonly<Record<string, string>>): JsonSchema {
  const translate = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(translate);
    if (value === null || typeof value !== 'object') return value;
    // Only a `description` keyword is prose: `properties.description` would be a field's schema.
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [
      key,
      key === 'description' && typeof v === 'string' ? (Object.hasOwn(translations, v) ? translations[v] : v) : translate(v),
    ]));
  };
  return translate(schema) as JsonSchema;
}
