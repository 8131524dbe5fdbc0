import { describe, expect, it } from 'vitest';
import { unknownVariableWarnings } from './unknown-variables.js';

describe('variables that look like ours but are not', () => {
  it('when a variable of ours is misspelt then one warning names it and the setting it is close to', () => {
    expect(unknownVariableWarnings({ REDIS_URI: 'redis://r:6379', REDIS_KEY_PREFX: 'prod:', KAFKA_BROKER: 'k:9092', API_PORT: '3000' })).toEqual([
      'KAFKA_BROKER is not a setting of this service and is ignored: did you mean KAFKA_BROKERS?',
      'REDIS_KEY_PREFX is not a setting of this service and is ignored: did you mean REDIS_KEY_PREFIX?',
      'REDIS_URI is not a setting of this service and is ignored: did you mean REDIS_URL?',
    ]);
  });

  it('when it is close to no setting then the warning suggests none', () => {
    expect(unknownVariableWarnings({ DASHBOARD_THEME: 'dark', MCP_PORTS: '1' })).toEqual([
      'DASHBOARD_THEME is not a setting of this service and is ignored',
      'MCP_PORTS is not a setting of this service and is ignored: did you mean MCP_PORT?',
    ]);
    expect(unknownVariableWarnings({ KAFKA_X_TOPIC: '1' })).toEqual(['KAFKA_X_TOPIC is not a setting of this service and is ignored']);
  });

  it('when a variable has none of our prefixes, or is Node\'s, then nothing is said, and values are never repeated', () => {
    expect(unknownVariableWarnings({ PATH: '/bin', HOME: '/root', NODE_OPTIONS: '--x', PGPASSWORD: 'secret', DATABASE_URL: 'postgres://x' })).toEqual([]);
    expect(unknownVariableWarnings({ DATABASE_PASSWORD: 'hunter2' }).join('')).not.toContain('hunter2');
  });
});
