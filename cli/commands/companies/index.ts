import type { Command } from 'commander';
import type { CliContext } from '../../context.js';
import { registerImportCommand } from './import-command.js';
import { registerSampleCommands } from './sample-commands.js';

export function registerCompanyCommands(program: Command, context: () => CliContext): void {
  registerImportCommand(program, context);
  registerSampleCommands(program, context);
}
