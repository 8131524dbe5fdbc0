import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export type RegisterCommands = (program: Command, context: () => CliContext) => void;

// Each area registers its own commands from its own folder.
export const registrations: RegisterCommands[] = [];
