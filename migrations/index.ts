// The ordered list of migrations. Listed explicitly (not discovered from the file system) so
// the same list works under tsx in development and as compiled JavaScript in production.
// Each migration must keep the previous release working: it runs on the new schema during a
// rolling upgrade and after a rollback of the image (README, "Upgrades, rollbacks and backups").
import type { Knex } from 'knex';
import * as companies from './20261122_001_companies.js';
import * as billing from './20261122_002_billing.js';
import * as dashboard from './20261122_003_dashboard.js';
import * as companyChangeNotify from './20261122_006_company_change_notify.js';
import * as importWritePath from './20261122_007_import_write_path.js';
import * as compactStoredMetrics from './20261122_008_compact_stored_metrics.js';
import * as companyChildrenChecks from './20261122_009_company_children_checks.js';
import * as usageBusBatches from './20261122_010_usage_bus_batches.js';
import * as usageBusWakeups from './20261124_011_usage_bus_wakeups.js';
import * as auditLogByOrganization from './20261125_012_audit_log_by_organization.js';
import * as ledgerPages from './20261125_013_ledger_pages.js';
import * as allowanceCreditsUsed from './20261125_014_allowance_credits_used.js';
import * as usageDaily from './20261125_015_usage_daily.js';
import * as deadLetterReplays from './20261125_016_dead_letter_replays.js';
import * as alertThresholdUnique from './20261125_017_alert_threshold_unique.js';
import * as ownCallsCap from './20261125_018_own_calls_cap.js';
import * as closedLists from './20261125_019_closed_lists.js';
import * as peerEmployeesIndex from './20261125_020_peer_employees_index.js';
import * as capChangeEntries from './20261125_021_cap_change_entries.js';
import * as sessionFlashes from './20261126_022_session_flashes.js';
import * as flagEventActor from './20261126_023_flag_event_actor.js';
import * as sessionSubmissions from './20261126_024_session_submissions.js';
import * as refusedCalls from './20261126_025_refused_calls.js';
import * as holderKind from './20261126_026_holder_kind.js';
import * as trustedDevices from './20261126_027_trusted_devices.js';
import * as signInPruningIndexes from './20261126_028_sign_in_pruning_indexes.js';
import * as sessionPasswordDigest from './20261126_029_session_password_digest.js';
import * as deadLetterSource from './20261126_030_dead_letter_source.js';
import * as auditLogMembershipEvents from './20261126_031_audit_log_membership_events.js';
import * as ledgerApplicationOrder from './20261126_032_ledger_application_order.js';
import * as passwordResets from './20261126_034_password_resets.js';
import * as signInAddressIndex from './20261127_035_sign_in_address_index.js';
import * as webhookDeliveriesByOrganization from './20261127_036_webhook_deliveries_by_organization.js';
import * as companySearchOrder from './20261127_037_company_search_order.js';
import * as companyNameNearest from './20261127_038_company_name_nearest.js';
import * as deadLetterReplayAfter from './20261127_039_dead_letter_replay_after.js';
import * as namesFolded from './20261128_040_names_folded.js';

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
  /** `transaction: false` for statements that cannot run in one (CREATE INDEX CONCURRENTLY). */
  config?: { transaction?: boolean };
}

export const migrations: Migration[] = [
  { name: '20261122_001_companies', ...companies },
  { name: '20261122_002_billing', ...billing },
  { name: '20261122_003_dashboard', ...dashboard },
  { name: '20261122_006_company_change_notify', ...companyChangeNotify },
  { name: '20261122_007_import_write_path', ...importWritePath },
  { name: '20261122_008_compact_stored_metrics', ...compactStoredMetrics },
  { name: '20261122_009_company_children_checks', ...companyChildrenChecks },
  { name: '20261122_010_usage_bus_batches', ...usageBusBatches },
  { name: '20261124_011_usage_bus_wakeups', ...usageBusWakeups },
  { name: '20261125_012_audit_log_by_organization', ...auditLogByOrganization },
  { name: '20261125_013_ledger_pages', ...ledgerPages },
  { name: '20261125_014_allowance_credits_used', ...allowanceCreditsUsed },
  { name: '20261125_015_usage_daily', ...usageDaily },
  { name: '20261125_016_dead_letter_replays', ...deadLetterReplays },
  { name: '20261125_017_alert_threshold_unique', ...alertThresholdUnique },
  { name: '20261125_018_own_calls_cap', ...ownCallsCap },
  { name: '20261125_019_closed_lists', ...closedLists },
  { name: '20261125_020_peer_employees_index', ...peerEmployeesIndex },
  { name: '20261125_021_cap_change_entries', ...capChangeEntries },
  { name: '20261126_022_session_flashes', ...sessionFlashes },
  { name: '20261126_023_flag_event_actor', ...flagEventActor },
  { name: '20261126_024_session_submissions', ...sessionSubmissions },
  { name: '20261126_025_refused_calls', ...refusedCalls },
  { name: '20261126_026_holder_kind', ...holderKind },
  { name: '20261126_027_trusted_devices', ...trustedDevices },
  { name: '20261126_028_sign_in_pruning_indexes', ...signInPruningIndexes },
  { name: '20261126_029_session_password_digest', ...sessionPasswordDigest },
  { name: '20261126_030_dead_letter_source', ...deadLetterSource },
  { name: '20261126_031_audit_log_membership_events', ...auditLogMembershipEvents },
  { name: '20261126_032_ledger_application_order', ...ledgerApplicationOrder },
  { name: '20261126_034_password_resets', ...passwordResets },
  { name: '20261127_035_sign_in_address_index', ...signInAddressIndex },
  { name: '20261127_036_webhook_deliveries_by_organization', ...webhookDeliveriesByOrganization },
  { name: '20261127_037_company_search_order', ...companySearchOrder },
  { name: '20261127_038_company_name_nearest', ...companyNameNearest },
  { name: '20261127_039_dead_letter_replay_after', ...deadLetterReplayAfter },
  { name: '20261128_040_names_folded', ...namesFolded },
];
