import type { MetricCategory } from './schemas/index.js';

// Every line item and derived metric the service knows: the Italian civil code balance sheet
// (art. 2424: Stato patrimoniale) and income statement (art. 2425: Conto economico), in
// statutory order, followed by the ratios derived from them. Dossiers may carry other slugs;
// these are the ones with names, categories and units supplied when an import omits them.
// Money is whole euros (unit EUR); ratios are fractions (0.12 = 12%); days are days.
export interface MetricDefinition {
  slug: string;
  name: string;
  nameIt: string;
  categories: MetricCategory[];
  unit: string | null;
}

const asset = (slug: string, name: string, nameIt: string): MetricDefinition => ({ slug, name, nameIt, categories: ['balance_sheet', 'assets'], unit: 'EUR' });
const liability = (slug: string, name: string, nameIt: string): MetricDefinition => ({ slug, name, nameIt, categories: ['balance_sheet', 'liabilities'], unit: 'EUR' });
const equity = (slug: string, name: string, nameIt: string): MetricDefinition => ({ slug, name, nameIt, categories: ['balance_sheet', 'equity'], unit: 'EUR' });
const revenue = (slug: string, name: string, nameIt: string): MetricDefinition => ({ slug, name, nameIt, categories: ['income_statement', 'revenue'], unit: 'EUR' });
const cost = (slug: string, name: string, nameIt: string): MetricDefinition => ({ slug, name, nameIt, categories: ['income_statement', 'costs'], unit: 'EUR' });
const result = (slug: string, name: string, nameIt: string): MetricDefinition => ({ slug, name, nameIt, categories: ['income_statement', 'profitability'], unit: 'EUR' });
const ratio = (slug: string, name: string, nameIt: string, category: MetricCategory, unit: string | null = 'ratio'): MetricDefinition => ({ slug, name, nameIt, categories: ['ratio', category], unit });

export const metricCatalogue: MetricDefinition[] = [
  // Art. 2424, Attivo
  asset('subscribed_capital_unpaid', 'Subscribed capital unpaid (A)', 'Crediti verso soci per versamenti ancora dovuti (A)'),
  asset('intangible_assets', 'Intangible fixed assets (B.I)', 'Immobilizzazioni immateriali (B.I)'),
  asset('tangible_assets', 'Tangible fixed assets (B.II)', 'Immobilizzazioni materiali (B.II)'),
  asset('financial_fixed_assets', 'Financial fixed assets (B.III)', 'Immobilizzazioni finanziarie (B.III)'),
  asset('total_fixed_assets', 'Total fixed assets (B)', 'Totale immobilizzazioni (B)'),
  asset('inventories', 'Inventories (C.I)', 'Rimanenze (C.I)'),
  asset('trade_receivables', 'Trade receivables (C.II.1)', 'Crediti verso clienti (C.II.1)'),
  asset('receivables', 'Total receivables (C.II)', 'Totale crediti (C.II)'),
  asset('current_financial_assets', 'Current financial assets (C.III)', 'Attività finanziarie che non costituiscono immobilizzazioni (C.III)'),
  asset('cash_and_equivalents', 'Cash and cash equivalents (C.IV)', 'Disponibilità liquide (C.IV)'),
  asset('total_current_assets', 'Total current assets (C)', 'Totale attivo circolante (C)'),
  asset('prepaid_expenses_and_accrued_income', 'Accrued income and prepaid expenses (D)', 'Ratei e risconti attivi (D)'),
  asset('total_assets', 'Total assets', 'Totale attivo'),

  // Art. 2424, Passivo
  equity('share_capital', 'Share capital (A.I)', 'Capitale (A.I)'),
  equity('reserves', 'Reserves (A.II-A.VII)', 'Riserve (A.II-A.VII)'),
  equity('retained_earnings', 'Retained earnings or losses carried forward (A.VIII)', 'Utili (perdite) portati a nuovo (A.VIII)'),
  equity('total_equity', "Total shareholders' equity (A)", 'Totale patrimonio netto (A)'),
  liability('provisions_for_risks_and_charges', 'Provisions for risks and charges (B)', 'Fondi per rischi e oneri (B)'),
  liability('employee_severance_indemnity', 'Employee severance indemnity (C)', 'Trattamento di fine rapporto di lavoro subordinato (C)'),
  liability('bank_debts', 'Amounts owed to banks (D.4)', 'Debiti verso banche (D.4)'),
  liability('trade_payables', 'Trade payables (D.7)', 'Debiti verso fornitori (D.7)'),
  liability('debts_due_within_one_year', 'Debts due within one year', "Debiti esigibili entro l'esercizio successivo"),
  liability('debts_due_beyond_one_year', 'Debts due beyond one year', "Debiti esigibili oltre l'esercizio successivo"),
  liability('total_debts', 'Total debts (D)', 'Totale debiti (D)'),
  liability('accrued_expenses_and_deferred_income', 'Accrued expenses and deferred income (E)', 'Ratei e risconti passivi (E)'),
  liability('total_liabilities', 'Total liabilities (B+C+D+E)', 'Totale passività (B+C+D+E)'),
  { slug: 'total_liabilities_and_equity', name: 'Total liabilities and equity', nameIt: 'Totale passivo', categories: ['balance_sheet', 'liabilities', 'equity'], unit: 'EUR' },

  // Art. 2425, Conto economico
  revenue('revenue', 'Revenue from sales and services (A.1)', 'Ricavi delle vendite e delle prestazioni (A.1)'),
  revenue('change_in_product_inventories', 'Change in inventories of work in progress, semi-finished and finished products (A.2)', 'Variazioni delle rimanenze di prodotti in corso di lavorazione, semilavorati e finiti (A.2)'),
  revenue('change_in_contract_work_in_progress', 'Change in contract work in progress (A.3)', 'Variazioni dei lavori in corso su ordinazione (A.3)'),
  revenue('capitalised_own_work', 'Own work capitalised (A.4)', 'Incrementi di immobilizzazioni per lavori interni (A.4)'),
  revenue('other_revenues', 'Other revenues and income (A.5)', 'Altri ricavi e proventi (A.5)'),
  revenue('total_production_value', 'Total value of production (A)', 'Totale valore della produzione (A)'),
  cost('raw_materials_costs', 'Raw materials, consumables and goods (B.6)', 'Costi per materie prime, sussidiarie, di consumo e di merci (B.6)'),
  cost('services_costs', 'Services (B.7)', 'Costi per servizi (B.7)'),
  cost('leases_costs', 'Use of third-party assets (B.8)', 'Costi per godimento di beni di terzi (B.8)'),
  cost('personnel_costs', 'Personnel costs (B.9)', 'Costi per il personale (B.9)'),
  cost('depreciation_amortisation_writedowns', 'Depreciation, amortisation and write-downs (B.10)', 'Ammortamenti e svalutazioni (B.10)'),
  cost('change_in_raw_materials_inventories', 'Change in inventories of raw materials, consumables and goods (B.11)', 'Variazioni delle rimanenze di materie prime, sussidiarie, di consumo e merci (B.11)'),
  cost('provisions_for_risks', 'Provisions for risks (B.12)', 'Accantonamenti per rischi (B.12)'),
  cost('other_provisions', 'Other provisions (B.13)', 'Altri accantonamenti (B.13)'),
  cost('other_operating_expenses', 'Other operating expenses (B.14)', 'Oneri diversi di gestione (B.14)'),
  cost('total_production_costs', 'Total costs of production (B)', 'Totale costi della produzione (B)'),
  result('operating_result', 'Difference between value and costs of production (A-B)', 'Differenza tra valore e costi della produzione (A-B)'),
  { slug: 'financial_income', name: 'Financial income (C.15+C.16)', nameIt: 'Proventi finanziari (C.15+C.16)', categories: ['income_statement', 'revenue'], unit: 'EUR' },
  cost('interest_and_other_financial_charges', 'Interest and other financial charges (C.17)', 'Interessi e altri oneri finanziari (C.17)'),
  result('total_financial_income_and_charges', 'Total financial income and charges (C)', 'Totale proventi e oneri finanziari (C)'),
  result('financial_value_adjustments', 'Value adjustments to financial assets and liabilities (D)', 'Totale rettifiche di valore di attività e passività finanziarie (D)'),
  result('profit_before_tax', 'Profit (loss) before tax (A-B+C+D)', 'Risultato prima delle imposte (A-B+C+D)'),
  cost('income_taxes', 'Income taxes, current, deferred and prepaid (20)', "Imposte sul reddito dell'esercizio, correnti, differite e anticipate (20)"),
  // The year's result is both the last line of the income statement and a line of equity (A.IX).
  { slug: 'net_income', name: 'Net profit (loss) for the year (21; equity A.IX)', nameIt: "Utile (perdita) dell'esercizio (21; patrimonio netto A.IX)", categories: ['income_statement', 'profitability', 'balance_sheet', 'equity'], unit: 'EUR' },

  // Derived
  { slug: 'ebitda', name: 'EBITDA (A-B + B.10 + B.12 + B.13)', nameIt: 'Margine operativo lordo (EBITDA)', categories: ['profitability'], unit: 'EUR' },
  ratio('ebitda_margin', 'EBITDA margin (EBITDA / revenue)', 'EBITDA margin (MOL / ricavi)', 'profitability'),
  ratio('roe', 'Return on equity (net income / equity)', 'ROE (utile / patrimonio netto)', 'profitability'),
  ratio('roa', 'Return on assets (A-B / total assets)', 'ROA (risultato operativo / totale attivo)', 'profitability'),
  ratio('ros', 'Return on sales (A-B / revenue)', 'ROS (risultato operativo / ricavi)', 'profitability'),
  ratio('current_ratio', 'Current ratio (current assets / debts due within one year)', "Indice di liquidità corrente (attivo circolante / debiti entro l'esercizio)", 'liquidity'),
  ratio('quick_ratio', 'Quick ratio (current assets less inventories / debts due within one year)', "Indice di liquidità immediata (attivo circolante meno rimanenze / debiti entro l'esercizio)", 'liquidity'),
  ratio('debt_to_equity', 'Debt to equity (total debts / equity)', 'Rapporto di indebitamento (debiti / patrimonio netto)', 'solvency'),
  ratio('equity_ratio', 'Equity ratio (equity / total assets)', 'Indice di patrimonializzazione (patrimonio netto / totale attivo)', 'solvency'),
  ratio('net_financial_position', 'Net financial debt (bank debts less cash and current financial assets)', 'Posizione finanziaria netta (debiti verso banche meno liquidità e attività finanziarie correnti)', 'solvency', 'EUR'),
  ratio('asset_turnover', 'Asset turnover (revenue / total assets)', 'Rotazione del capitale investito (ricavi / totale attivo)', 'efficiency'),
  ratio('days_sales_outstanding', 'Days sales outstanding (trade receivables / revenue x 365)', 'Giorni medi di incasso (crediti verso clienti / ricavi x 365)', 'efficiency', 'days'),
];

export const metricDefinitionsBySlug: ReadonlyMap<string, MetricDefinition> = new Map(metricCatalogue.map((m) => [m.slug, m]));
