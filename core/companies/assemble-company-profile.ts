import type { CompanyProfileData } from './schemas/index.js';
import type { CompanyQueryShape, CompanyRow, PeersRow } from './company-query.js';
import { isLargeCompany } from './company-size.js';
import * as part from './assemble-company-parts.js';

// decisions.md: profile history up to 5 years; at most 10 peers.
export const companyProfileShape: CompanyQueryShape = { holders: [], officers: false, branches: false, years: 5, metrics: false };
export const MAX_PEERS = 10;

/**
 * The branch rule (EU SME definition) on the latest filed year: the size the response shows as
 * `latest.size`, so the two always agree. That size was classified from the year's own figures;
 * the rounded latest_* columns (search and peers) could fall on the other side of a threshold
 * by a fraction of a euro. Without a size, the rule on those columns.
 */
export const isLargeProfile = (row: CompanyRow): boolean => {
  const size = part.latest(row)?.size;
  if (size) return size === 'large';
  return isLargeCompany({ employees: row.latest_employees, revenue: row.latest_revenue, totalAssets: row.latest_total_assets });
};

/** Same NACE division = the first two digits of the NACE code; null when there is none. */
export const naceDivision = (row: CompanyRow): string | null => (row.nace_code && row.nace_code.length >= 2 ? row.nace_code.slice(0, 2) : null);

export function assembleLargeProfile(row: CompanyRow, peers: PeersRow): CompanyProfileData {
  return {
    id: String(row.id),
    identity: part.identity(row),
    latest: part.latest(row),
    peerCount: peers.peer_count,
    peers: (peers.peers ?? []).map((p) => ({ id: String(p.id), identity: part.identity(p), latest: part.latest(p) })),
  };
}

export function assembleSmallProfile(row: CompanyRow): CompanyProfileData {
  const aids = part.stateAids(row.state_aids);
  return {
    id: String(row.id),
    identity: part.identity(row),
    latest: part.latest(row),
    risk: {
      ...part.risk(row),
      stateAids: aids === null ? null : { count: aids.count, amount: aids.amount },
      history: part.snapshots(row.years),
    },
  };
}
