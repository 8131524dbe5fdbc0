import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { registerBillingCommands } from './billing/index.js';
import { registerCompanyCommands } from './companies/index.js';
import { registerMigrateCommands } from './db/index.js';
import { registerOperatorCommands } from './operator/index.js';
import { registerAccessCommands } from './orgs/index.js';
import { registerStartCommand } from './start/index.js';

export type RegisterCommands = (program: Command, context: () => CliContext) => void;

// Each area registers its own commands from its own folder.
export const registrations: RegisterCommands[] = [
  registerMigrateCommands,
  registerAccessCommands,
  registerCompanyCommands,
  registerBillingCommands,
  registerOperatorCommands,
  registerStartCommand,
];
