import type { RegisterCommands } from '../index.js';
import { unknownVariableWarnings } from '../../../core/config/index.js';
import { createLogger } from '../../../core/logging/index.js';

export const registerStartCommand: RegisterCommands = (program, context) => {
  program
    .command('start')
    .description('Run the whole service in one process: embedded Postgres (unless DATABASE_URL), migrations, sample data, demo organization and key, API, tool server, dashboard and billing worker.')
    .action(async () => {
      const started = Date.now();
      // Imported here, not at the top: the API, tool server, dashboard and billing worker are
      // most of the CLI's module graph (~0.4 s of loading), which every other command, each a
      // process of its own, would otherwise load for nothing.
      const [{ runStart }, { tuneHeap }] = await Promise.all([import('./run-start.js'), import('../../../core/http-server/index.js')]);
      // This process serves the API and the tool server: their heap settings, not the CLI's.
      tuneHeap();
      const { config } = context();
      const logger = createLogger({ level: config.LOG_LEVEL, base: { process: 'start' } });
      // As each service run alone says: a misspelt API_PROT would otherwise leave the API on
      // its default port with nothing said.
      for (const warning of unknownVariableWarnings(process.env)) logger.warn(warning);
      await runStart(config, logger, started);
    });
};
