import type { RegisterCommands } from '../index.js';
import { registerKeyCommands } from './key-commands.js';
import { registerOrgCommands } from './org-commands.js';
import { registerPlanCommands } from './plan-commands.js';

export const registerAccessCommands: RegisterCommands = (program, context) => {
  registerOrgCommands(program, context);
  registerPlanCommands(program, context);
  registerKeyCommands(program, context);
};
