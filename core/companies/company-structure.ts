import { z } from 'zod';
import { lookupKeys } from './company-store.js';
import { runStoreQuery } from './run-store-query.js';
import { fiscalCodeRefusal } from './identifier-hints.js';
import { companyBranchSchema, fiscalCodePattern, holderSchema, officerSchema, type CompanyBranch, type Officer } from './schemas/index.js';
import type { CompanyQueryDeps } from './search-companies.js';

// A company's group structure: who owns it (shareholders, walked upward) and what it owns
// (subsidiaries, walked downward), following company_holders.related_company_id from company
// to company, as either company files the link (LINKS_SQL), one query per level. Ownership
// graphs can be cyclic (cross-holdings) and can reach one company by two paths; a company
// already on the current branch is marked `cycle` and not expanded again, and the whole walk
// stops at MAX_NODES.

export const MAX_STRUCTURE_DEPTH = 5;
export const MAX_NODES = 500;

export const companyStructureInputSchema = z.strictObject({
  fiscalCode: z.string().trim().regex(fiscalCodePattern, { error: (issue) => fiscalCodeRefusal(issue.input) })
    .describe('The company\'s fiscal code: 11 digits or 16 characters (case-insensitive).'),
  depthUp: z.number().int().min(0).max(MAX_STRUCTURE_DEPTH).default(2).describe(`Levels of shareholders to follow upward, 0-${MAX_STRUCTURE_DEPTH} (1 = direct shareholders only; 0 = none looked up).`),
  depthDown: z.number().int().min(0).max(MAX_STRUCTURE_DEPTH).default(2).describe(`Levels of subsidiaries to follow downward, 0-${MAX_STRUCTURE_DEPTH} (1 = direct subsidiaries only; 0 = none looked up).`),
});

// Each company of the tree says whether it is dissolved, as the search and the people search do:
// "is any company of the group dissolved?" took one search per node.
const companyRefSchema = z.strictObject({
  id: z.string(),
  fiscalCode: z.string(),
  legalName: z.string().nullable(),
  status: z.enum(['active', 'dissolved']).describe('dissolved: a dissolution year is recorded.'),
});
type CompanyRef = z.infer<typeof companyRefSchema>;
const status = (dissolutionYear: number | null): CompanyRef['status'] => (dissolutionYear === null ? 'active' : 'dissolved');

const nodeFields = {
  name: z.string().nullable(),
  share: z.number().nullable().describe('Ownership fraction 0-1 of this link.'),
  company: companyRefSchema.nullable()
    .describe('The company this holder is, when known to the service; null for people and companies not on file (see kind).'),
  cycle: z.boolean().describe('This company already appears above on the same branch (cross-holding): not expanded again.'),
  moreBeyondDepth: z.boolean().describe('There are further levels beyond the requested depth.'),
};

export interface ShareholderNode {
  name: string | null;
  kind: 'person' | 'company';
  share: number | null;
  company: CompanyRef | null;
  cycle: boolean;
  moreBeyondDepth: boolean;
  shareholders: ShareholderNode[];
}
export type SubsidiaryNode = Omit<ShareholderNode, 'shareholders' | 'kind'> & { subsidiaries: SubsidiaryNode[] };

export const shareholderNodeSchema: z.ZodType<ShareholderNode> = z.strictObject({
  ...nodeFields,
  // Subsidiaries are companies; a holder may be either.
  kind: z.enum(['person', 'company']).describe('As registered, or inferred from code and name.'),
  get shareholders() { return z.array(shareholderNodeSchema).describe('Who owns this shareholder (next level up).'); },
}).meta({ id: 'ShareholderNode' });

export const subsidiaryNodeSchema: z.ZodType<SubsidiaryNode> = z.strictObject({
  ...nodeFields,
  get subsidiaries() { return z.array(subsidiaryNodeSchema).describe('What this subsidiary owns (next level down).'); },
}).meta({ id: 'SubsidiaryNode' });

export const companyStructureSchema = z.strictObject({
  company: companyRefSchema,
  depthUp: z.number().int(),
  depthDown: z.number().int(),
  shareholders: z.array(shareholderNodeSchema).describe('Direct shareholders, each with its own shareholders up to depthUp levels. Empty when depthUp is 0: not looked up, whoever owns the company.'),
  beneficialOwners: z.array(holderSchema).describe('Ultimate beneficial owners as registered (names and shares only). share null: the register gives none, as when no person holds over 25% and the law names the legal representative, who may hold nothing.'),
  subsidiaries: z.array(subsidiaryNodeSchema).describe('Direct subsidiaries, each with its own subsidiaries down to depthDown levels. Empty when depthDown is 0: not looked up, whatever the company owns.'),
  officers: z.array(officerSchema),
  branches: z.array(companyBranchSchema),
  truncated: z.boolean().describe(`True when the walk stopped at ${MAX_NODES} nodes before reaching the requested depth.`),
});

export type CompanyStructureInput = z.output<typeof companyStructureInputSchema>;
export type CompanyStructure = z.infer<typeof companyStructureSchema>;

interface RootRow {
  id: number;
  fiscal_code: string;
  legal_name: string | null;
  dissolution_year: number | null;
  beneficial_owners: { name: string | null; share: number | null }[] | null;
  officers: Officer[] | null;
  branches: CompanyBranch[] | null;
}

interface LinkRow {
  company_id: number;
  name: string | null;
  kind: 'person' | 'company';
  share: number | null;
  related_id: number | null;
  related_fiscal_code: string | null;
  related_legal_name: string | null;
  related_dissolution_year: number | null;
  has_more: boolean;
}

const ROOT_SQL = `
SELECT c.id, c.fiscal_code, c.legal_name, c.dissolution_year,
  (SELECT json_agg(json_build_object('name', h.name, 'share', h.share) ORDER BY h.position)
     FROM company_holders h WHERE h.company_id = c.id AND h.relation = 'beneficial_owner') AS beneficial_owners,
  (SELECT json_agg(json_build_object('name', o.name, 'role', o.role, 'roleCategory', o.role_category) ORDER BY o.position)
     FROM company_officers o WHERE o.company_id = c.id) AS officers,
  (SELECT json_agg(json_build_object('legalName', b.legal_name, 'address', b.address) ORDER BY b.position)
     FROM company_branches b WHERE b.company_id = c.id) AS branches
FROM (SELECT * FROM companies WHERE fiscal_code = ? OR vat_number = ? ORDER BY fiscal_code = ? DESC, fiscal_code LIMIT 1) c`;

// One level of links for a set of companies, in either company's words: a company's own rows of
// the relation (its shareholders, or its subsidiaries), or, when it files none, the rows of other
// companies that give the opposite one (a company that names it as a shareholder is its
// subsidiary, one that names it as a subsidiary its shareholder). A register often files the link
// on one side only: a holding's subsidiaries were found only when the holding itself listed them.
// A company's own list, when it has one, is the whole of it: mixed with others' filings, a
// holder it names without a code (so unlinked) came twice, 140% of the company. has_more says
// whether the linked company has links of the same relation itself, either way (so a node at the
// depth limit can say there is more).
// Named bindings: ids (the companies'), relation and opposite.
const LINKS_SQL = `
WITH own AS (
  SELECT h.company_id, h.name, h.share, h.related_company_id AS related_id, h.position AS ord,
    CASE WHEN h.related_company_id IS NOT NULL OR h.related_fiscal_code ~ '^[0-9]{11}$' THEN 'company' ELSE h.holder_kind END AS kind
  FROM company_holders h
  WHERE h.company_id = ANY(:ids::bigint[]) AND h.relation = :relation
), given AS (
  SELECT h.related_company_id AS company_id, oc.legal_name AS name, h.share, h.company_id AS related_id, oc.fiscal_code AS ord_code, 'company' AS kind
  FROM company_holders h JOIN companies oc ON oc.id = h.company_id
  WHERE h.related_company_id = ANY(:ids::bigint[]) AND h.relation = :opposite
    AND NOT EXISTS (SELECT 1 FROM own WHERE own.company_id = h.related_company_id)
), links AS (
  SELECT company_id, name, share, related_id, 0 AS side, ord, NULL::text AS ord_code, kind FROM own
  UNION ALL
  SELECT company_id, name, share, related_id, 1 AS side, 0 AS ord, ord_code, kind FROM given
)
SELECT l.company_id, l.name, l.kind, l.share, rc.id AS related_id, rc.fiscal_code AS related_fiscal_code, rc.legal_name AS related_legal_name, rc.dissolution_year AS related_dissolution_year,
  (EXISTS (SELECT 1 FROM company_holders x WHERE x.company_id = l.related_id AND x.relation = :relation)
   OR EXISTS (SELECT 1 FROM company_holders y WHERE y.related_company_id = l.related_id AND y.relation = :opposite)) AS has_more
FROM links l
LEFT JOIN companies rc ON rc.id = l.related_id
ORDER BY l.company_id, l.side, l.ord, l.ord_code`;

const opposite = { shareholder: 'subsidiary', subsidiary: 'shareholder' } as const;

type Relation = 'shareholder' | 'subsidiary';
interface WalkNode {
  name: string | null;
  kind: 'person' | 'company';
  share: number | null;
  company: CompanyRef | null;
  cycle: boolean;
  moreBeyondDepth: boolean;
  children: WalkNode[];
}

/** null when no company has this fiscal code (or VAT number). */
export async function companyStructure(deps: CompanyQueryDeps, input: CompanyStructureInput): Promise<CompanyStructure | null> {
  const { code, vatNumber } = lookupKeys(input.fiscalCode);
  const rootResult = await runStoreQuery(deps, 'company structure', deps.db.raw<{ rows: RootRow[] }>(ROOT_SQL, [code, vatNumber, code]));
  const root = rootResult.rows[0];
  if (!root) return null;

  const budget = { nodes: 0, truncated: false };
  const up = await walk(deps, root.id, 'shareholder', input.depthUp, budget);
  const down = await walk(deps, root.id, 'subsidiary', input.depthDown, budget);
  const asShareholder = (n: WalkNode): ShareholderNode => ({ ...fields(n), kind: n.kind, shareholders: n.children.map(asShareholder) });
  const asSubsidiary = (n: WalkNode): SubsidiaryNode => ({ ...fields(n), subsidiaries: n.children.map(asSubsidiary) });

  return {
    company: { id: String(root.id), fiscalCode: root.fiscal_code, legalName: root.legal_name, status: status(root.dissolution_year) },
    depthUp: input.depthUp,
    depthDown: input.depthDown,
    shareholders: up.map(asShareholder),
    beneficialOwners: (root.beneficial_owners ?? []).map((h) => ({ name: h.name, share: h.share })),
    subsidiaries: down.map(asSubsidiary),
    officers: (root.officers ?? []).map((o) => ({ name: o.name, role: o.role, roleCategory: o.roleCategory })),
    branches: (root.branches ?? []).map((b) => ({ legalName: b.legalName, address: b.address })),
    truncated: budget.truncated,
  };
}

const fields = (n: WalkNode) => ({ name: n.name, share: n.share, company: n.company, cycle: n.cycle, moreBeyondDepth: n.moreBeyondDepth });

/** Breadth-first, one query per level; returns the root's direct links with their subtrees. */
async function walk(deps: CompanyQueryDeps, rootId: number, relation: Relation, depth: number, budget: { nodes: number; truncated: boolean }): Promise<WalkNode[]> {
  const top: WalkNode[] = [];
  // Each frontier entry: a company to expand, where its links go, and the companies above it on its branch.
  let frontier: { id: number; into: WalkNode[]; ancestors: Set<number> }[] = [{ id: rootId, into: top, ancestors: new Set() }];
  for (let level = 1; level <= depth && frontier.length > 0; level++) {
    const ids = [...new Set(frontier.map((f) => f.id))];
    const result = await runStoreQuery(deps, 'company structure level', deps.db.raw<{ rows: LinkRow[] }>(LINKS_SQL, { ids, relation, opposite: opposite[relation] }));
    const byCompany = new Map<number, LinkRow[]>();
    for (const row of result.rows) {
      const list = byCompany.get(Number(row.company_id));
      if (list) list.push(row);
      else byCompany.set(Number(row.company_id), [row]);
    }
    const next: typeof frontier = [];
    for (const f of frontier) {
      const branch = new Set(f.ancestors).add(f.id);
      for (const link of byCompany.get(f.id) ?? []) {
        if (budget.nodes >= MAX_NODES) { budget.truncated = true; break; }
        budget.nodes++;
        const relatedId = link.related_id === null ? null : Number(link.related_id);
        const cycle = relatedId !== null && branch.has(relatedId);
        const expand = relatedId !== null && !cycle && level < depth;
        const node: WalkNode = {
          name: link.name,
          kind: link.kind,
          share: link.share,
          company: relatedId === null ? null : {
            id: String(relatedId), fiscalCode: link.related_fiscal_code ?? '', legalName: link.related_legal_name, status: status(link.related_dissolution_year),
          },
          cycle,
          moreBeyondDepth: relatedId !== null && !cycle && level === depth && link.has_more,
          children: [],
        };
        f.into.push(node);
        if (expand) next.push({ id: relatedId, into: node.children, ancestors: branch });
      }
    }
    frontier = next;
  }
  return top;
}
